#!/usr/bin/env bash
# Builds the LXD images the `lxd` compute driver uses, offline from Debian packages, and imports them
# with their aliases (run as root after `npm run lxd:setup`; an alias already imported is skipped):
#   busybox    the tiny image the driver tests use (Debian's busybox-static, no network needed)
#   debian-12  Debian 12 with openssh-server and systemd, built by mmdebstrap from this machine's own
#              apt sources (so no mirror address is written into this repository)
# Usage: scripts/lxd/images.sh [busybox] [debian-12]   (no argument: both)
# HB_IMAGE_REPLACE=1 builds an image already imported again and moves its alias to the new build
# (the old image is deleted; containers made from it keep their disks), so a host takes up a change
# to the image without a moment in which the alias is missing.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "$(id -u)" != 0 ]; then
  echo "images must be built as root (the rootfs keeps root ownership)" >&2
  exit 1
fi
# The rootfs is built outside the checkout: mmdebstrap mounts /proc inside it while it works, and any
# tool walking the checkout at that moment (biome, tsc, the test runner, a copy detector) would read
# the host's /proc through it. Each build has its own folder, removed when the build ends.
build_root="${HB_IMAGE_BUILD_DIR:-${TMPDIR:-/var/tmp}}"
mkdir -p "$build_root"
out="$(mktemp -d "$build_root/hb-lxd-images.XXXXXX")"
case "$(realpath "$out")/" in
  "$(realpath .)"/*) echo "the image build folder $out is inside the checkout; choose one outside it" >&2; exit 1 ;;
esac
# --one-file-system: should a build be killed with /proc still mounted below it, the host's /proc is
# left alone.
trap 'rm -rf --one-file-system "$out"' EXIT
wanted=("$@")
[ ${#wanted[@]} -eq 0 ] && wanted=(busybox debian-12)

imported() { lxc image info "$1" >/dev/null 2>&1; }

# The images are plain tarballs, not gzipped: LXD takes either, and the image never leaves this
# host. gzip cost the Debian image's build 6.2 CPU-s (158 MB to 54 MB), and every container made
# from it on the dir pool 0.9 CPU-s more to unpack (measured 2026-11-30).

import_image() { # tarball alias
  local old=""
  if imported "$2"; then old="$(lxc query "/1.0/images/aliases/$2" | sed -n 's/.*"target": "\([0-9a-f]*\)".*/\1/p')"; fi
  if [ -z "$old" ]; then
    lxc image import "$1" --alias "$2"
    return
  fi
  # A unified tarball's fingerprint is its SHA-256.
  local new
  new="$(sha256sum "$1" | cut -d' ' -f1)"
  [ "$new" = "$old" ] && return
  lxc image import "$1"
  lxc image alias delete "$2"
  lxc image alias create "$2" "$new"
  lxc image delete "$old"
}

need_pkg() {
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
      return
    fi
  done
}

metadata() { # name description
  cat <<META
architecture: $(uname -m)
creation_date: $(date +%s)
properties:
  os: $1
  description: $2
templates: {}
META
}

build_busybox() {
  need_pkg busybox-static
  local dir="$out/busybox"
  rm -rf "$dir"
  mkdir -p "$dir"/rootfs/{bin,sbin,etc,root,tmp,proc,sys,dev,run,var/log} \
    "$dir"/rootfs/etc/network/if-{pre-up,up,down,post-down}.d
  # busybox's ifup keeps its state in /var/run.
  ln -s /run "$dir/rootfs/var/run"
  cp /bin/busybox "$dir/rootfs/bin/busybox"
  for applet in $(/bin/busybox --list); do
    [ "$applet" = busybox ] || ln -sf busybox "$dir/rootfs/bin/$applet"
  done
  # A small init: takes the hostname from /etc/hostname (the driver writes it), brings up the
  # network the driver writes in /etc/network/interfaces (when the host gives machines one) and
  # exits on the signals LXD sends for a clean stop (SIGPWR) so stop and restart do not wait for a
  # timeout.
  cat >"$dir/rootfs/sbin/init" <<'INIT'
#!/bin/sh
[ -s /etc/hostname ] && hostname "$(cat /etc/hostname)"
# lo is up already (ifup reports it as an error); eth0 is what matters.
[ -s /etc/network/interfaces ] && ifup -a >/dev/null 2>&1
trap 'exit 0' PWR TERM USR2
while :; do sleep 3600 & wait $!; done
INIT
  chmod 755 "$dir/rootfs/sbin/init"
  # Debian's busybox has no chpasswd applet; the driver sets passwords with chpasswd, as on any
  # real image, so the test image gets a small one (user:password lines on stdin).
  cat >"$dir/rootfs/bin/chpasswd" <<'CHPASSWD'
#!/bin/sh
while IFS=: read -r user pass; do
  hash=$(mkpasswd -m sha512 "$pass") || exit 1
  sed -i "s|^$user:[^:]*:|$user:$hash:|" /etc/shadow || exit 1
done
CHPASSWD
  chmod 755 "$dir/rootfs/bin/chpasswd"
  echo 'root:x:0:0:root:/root:/bin/sh' >"$dir/rootfs/etc/passwd"
  echo 'root::0:0:99999:7:::' >"$dir/rootfs/etc/shadow"
  chmod 600 "$dir/rootfs/etc/shadow"
  echo 'root:x:0:' >"$dir/rootfs/etc/group"
  echo busybox >"$dir/rootfs/etc/hostname"
  metadata busybox "busybox test image" >"$dir/metadata.yaml"
  tar -C "$dir" --numeric-owner -cf "$out/busybox.tar" metadata.yaml rootfs
  rm -rf "$dir"
  import_image "$out/busybox.tar" busybox
}

host_sources() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -s "$f" ] && echo "$f"
  done
}

build_debian() {
  need_pkg mmdebstrap
  local dir="$out/debian-12"
  rm -rf "$dir"
  mkdir -p "$dir"
  local -a sources
  mapfile -t sources < <(host_sources)
  # Host keys made at build time would be shared by every machine: they are removed here and a unit
  # makes each instance's own on first boot, before sshd starts. Only an ed25519 key: an RSA key
  # (ssh-keygen -A) took most of the 1.3 s that unit cost at first boot, and every current client
  # speaks ed25519.
  # The boot is trimmed for a container VPS: units with nothing to do in a container (kernel
  # modules, e2scrub and fstrim of disks it does not own, the pstore) are masked, and sshd and its
  # key unit start as soon as the filesystems are up rather than after basic.target (sysinit, the
  # journal's flush, tmpfiles): order → SSH is the wait a customer sees.
  # Minimal as cloud images are (Ubuntu's minimal images exclude the same): no manual pages, no
  # documentation but each package's copyright, no message translations. LXD gives every container
  # its own id range and so changes the owner of every file of the rootfs at its first start, in
  # order → SSH: a third fewer files, a third less of that work. mmdebstrap keeps the excludes in the
  # image (/etc/dpkg/dpkg.cfg.d/99mmdebstrap), so packages a customer installs follow them too;
  # deleting that file and reinstalling brings the pages back.
  mmdebstrap --variant=minbase --include=openssh-server,systemd-sysv,iproute2,ifupdown \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*/LC_MESSAGES/*.mo' \
    --dpkgopt='path-exclude=/usr/share/lintian/*' \
    --customize-hook='rm -f "$1"/etc/ssh/ssh_host_*' \
    --customize-hook='printf "[Unit]\nDescription=SSH host keys for this machine\nDefaultDependencies=no\nAfter=local-fs.target\nBefore=ssh.service shutdown.target\nConflicts=shutdown.target\nConditionPathExists=!/etc/ssh/ssh_host_ed25519_key\n[Service]\nType=oneshot\nExecStart=/usr/bin/ssh-keygen -q -t ed25519 -N \"\" -f /etc/ssh/ssh_host_ed25519_key\n[Install]\nWantedBy=multi-user.target\n" >"$1"/etc/systemd/system/ssh-hostkeys.service' \
    --customize-hook='printf "HostKey /etc/ssh/ssh_host_ed25519_key\n" >"$1"/etc/ssh/sshd_config.d/hb-host-key.conf' \
    --customize-hook='mkdir -p "$1"/etc/systemd/system/ssh.service.d && printf "[Unit]\nDefaultDependencies=no\nAfter=local-fs.target systemd-journald.socket ssh-hostkeys.service\nBefore=shutdown.target\nConflicts=shutdown.target\n" >"$1"/etc/systemd/system/ssh.service.d/early.conf' \
    --customize-hook='chroot "$1" systemctl mask e2scrub_reap.service e2scrub_all.timer fstrim.timer systemd-pstore.service systemd-modules-load.service modprobe@.service' \
    --customize-hook='chroot "$1" systemctl enable ssh-hostkeys.service ssh.service' \
    --customize-hook='echo debian >"$1"/etc/hostname' \
    --customize-hook='truncate -s0 "$1"/etc/machine-id' \
    bookworm "$dir/rootfs" "${sources[@]}"
  metadata debian "Debian 12 (bookworm) with openssh-server" >"$dir/metadata.yaml"
  tar -C "$dir" --numeric-owner -cf "$out/debian-12.tar" metadata.yaml rootfs
  rm -rf "$dir"
  import_image "$out/debian-12.tar" debian-12
}

for image in "${wanted[@]}"; do
  if imported "$image" && [ -z "${HB_IMAGE_REPLACE:-}" ]; then
    echo "image $image: already imported"
    continue
  fi
  start=$(date +%s)
  case "$image" in
    busybox) build_busybox ;;
    debian-12) build_debian ;;
    *) echo "unknown image $image (known: busybox, debian-12)" >&2; exit 1 ;;
  esac
  echo "image $image: built and imported in $(($(date +%s) - start)) s"
done
