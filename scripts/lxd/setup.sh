#!/usr/bin/env bash
# One-time LXD set-up for the `lxd` compute driver (run as root; safe to run again).
# Installs Debian's lxd and lxcfs, raises the kernel limits LXD's production set-up guide names,
# sizes root's subordinate id ranges for one isolated range per container, starts lxcfs and the
# daemon without systemd when they are not running, and initialises LXD with a preseed: a `dir`
# storage pool, the root disk in the default profile and no managed network; then adds a btrfs pool
# (hb-btrfs, on a loop file) where the kernel and btrfs-progs allow, so root disk sizes hold.
# `lxd init --auto` would try to create a bridge on a free private subnet; machines here have none, and
# tests reach containers through proxy devices on 127.0.0.1 instead, so no bridge is made here; with
# HB_LXD_NETWORK_SUBNET set, scripts/lxd/network.sh prepares per-customer machine networks (below).
set -euo pipefail

if [ "$(id -u)" != 0 ]; then
  echo "lxd:setup must run as root (it installs packages and starts the LXD daemon)" >&2
  exit 1
fi

if ! command -v lxd >/dev/null 2>&1 || ! command -v lxc >/dev/null 2>&1; then
  echo "installing lxd and lxd-client from Debian"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends lxd lxd-client >/dev/null
fi

# lxcfs gives each container its own /proc/meminfo, /proc/cpuinfo, /proc/uptime, ... (free, top and
# uptime inside show the machine's limits, not the host's).
if ! command -v lxcfs >/dev/null 2>&1; then
  echo "installing lxcfs from Debian"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends lxcfs >/dev/null
fi

# zstd compresses machines' backups (services/compute/src/lxd/backups.ts): LXD runs the host's
# binary, and Debian's lxd does not depend on it.
if ! command -v zstd >/dev/null 2>&1; then
  echo "installing zstd from Debian"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends zstd >/dev/null
fi

socket=/var/lib/lxd/unix.socket
# Set when the running daemon must start again to see a change (new id ranges, lxcfs).
restart_daemon=""

# Kernel limits from LXD's production set-up guide ("Server settings for a LXD production setup"):
# with the defaults a host stops at about 20 containers (128 inotify instances per user, 200 keys).
# Written to /etc/sysctl.d (kept across reboots) and applied now; a value already higher is kept.
sysctl_file=/etc/sysctl.d/60-hb-lxd.conf
: >"$sysctl_file.new"
while read -r key value; do
  [ -n "$key" ] || continue
  current="$(sysctl -n "$key" 2>/dev/null || true)"
  if [ -z "$current" ]; then
    echo "sysctl $key is not available on this kernel; skipped"
    continue
  fi
  # kernel.dmesg_restrict is a switch (containers may not read the host's kernel log), not a limit.
  if [ "$key" != kernel.dmesg_restrict ] && [ "$current" -ge "$value" ] 2>/dev/null; then value="$current"; fi
  echo "$key = $value" >>"$sysctl_file.new"
  if [ "$current" != "$value" ] && ! sysctl -q -w "$key=$value" >/dev/null 2>&1; then
    echo "could not set $key to $value (kept $current)" >&2
  fi
done <<'SYSCTLS'
fs.aio-max-nr 524288
fs.inotify.max_queued_events 1048576
fs.inotify.max_user_instances 1048576
fs.inotify.max_user_watches 1048576
kernel.dmesg_restrict 1
kernel.keys.maxbytes 2000000
kernel.keys.maxkeys 2000
net.ipv4.neigh.default.gc_thresh3 8192
net.ipv6.neigh.default.gc_thresh3 8192
vm.max_map_count 262144
SYSCTLS
mv "$sysctl_file.new" "$sysctl_file"
# Open files, for sessions (the daemon started below raises its own).
printf '%s\n' '* soft nofile 1048576' '* hard nofile 1048576' 'root soft nofile 1048576' \
  'root hard nofile 1048576' >/etc/security/limits.d/60-hb-lxd.conf

# Each container has a host id range of its own (the driver sets security.idmap.isolated): LXD
# takes 65536 ids per container from root's range in /etc/subuid and /etc/subgid, so the range must
# hold one per container the host may run. Its start is kept (containers made before keep their
# maps); a range too small is widened to HB_LXD_IDMAP_SIZE ids (default 1000000000, LXD's own
# default where the files are missing: over 15000 containers).
idmap_size="${HB_LXD_IDMAP_SIZE:-1000000000}"
for file in /etc/subuid /etc/subgid; do
  touch "$file"
  for user in root _lxd; do
    [ "$user" = root ] || getent passwd "$user" >/dev/null || continue
    entry="$(grep -m1 "^$user:" "$file" || true)"
    if [ -z "$entry" ]; then
      echo "$user:1000000:$idmap_size" >>"$file"
    elif [ "$(echo "$entry" | cut -d: -f3)" -lt "$idmap_size" ]; then
      sed -i "s/^$user:\([0-9]*\):[0-9]*\$/$user:\1:$idmap_size/" "$file"
    else
      continue
    fi
    echo "$file: $user's id range now holds $idmap_size ids ($((idmap_size / 65536)) containers)"
    restart_daemon=1
  done
done

# lxcfs must be mounted before the daemon starts: LXD looks for it at start-up only.
# A mount whose lxcfs process has gone (the session or job that started it ended) stays in
# /proc/mounts but answers "Transport endpoint is not connected", and every container started on it
# fails to read /proc/meminfo: such a mount is lazily unmounted and lxcfs started again.
lxcfs_answers() { timeout 5 cat /var/lib/lxcfs/proc/uptime >/dev/null 2>&1; }
if grep -qs ' /var/lib/lxcfs fuse.lxcfs ' /proc/mounts && ! lxcfs_answers; then
  echo "lxcfs is mounted on /var/lib/lxcfs but does not answer (its process is gone): mounting it again"
  fusermount -u -z /var/lib/lxcfs 2>/dev/null || umount -l /var/lib/lxcfs 2>/dev/null || true
fi
if ! grep -qs ' /var/lib/lxcfs fuse.lxcfs ' /proc/mounts; then
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    systemctl start lxcfs
  else
    echo "starting lxcfs (log /var/log/lxcfs.log)"
    mkdir -p /var/lib/lxcfs
    # Detached (its own session, every stream redirected and no shell left waiting on it), so
    # `npm run lxd:setup | tail` returns and stopping the caller's shell leaves lxcfs running.
    (cd / && exec setsid lxcfs /var/lib/lxcfs) </dev/null >>/var/log/lxcfs.log 2>&1 &
  fi
  for _ in $(seq 1 50); do grep -qs ' /var/lib/lxcfs fuse.lxcfs ' /proc/mounts && lxcfs_answers && break; sleep 0.1; done
  if grep -qs ' /var/lib/lxcfs fuse.lxcfs ' /proc/mounts && lxcfs_answers; then
    restart_daemon=1
  else
    echo "lxcfs did not mount /var/lib/lxcfs (see /var/log/lxcfs.log): containers will see the host's /proc/meminfo" >&2
  fi
fi

# Without systemd running, nss-systemd has nothing to answer, and its error path aborted the LXD
# daemon in a CI run (daemon.log: "Assertion 'close_nointr(fd) != -EBADF' failed at
# src/basic/fd-util.c:77, function safe_close()" inside getpwuid_r, LXD looking up a container's
# id; every LXD test after it failed). On such a host the users and groups come from the files only.
if ! [ -d /run/systemd/system ] && grep -Eq '^(passwd|group|shadow|gshadow):.*[[:space:]]systemd([[:space:]]|$)' /etc/nsswitch.conf; then
  echo "nsswitch.conf: users and groups from the files only (systemd is not running here)"
  sed -i -E '/^(passwd|group|shadow|gshadow):/ s/[[:space:]]+systemd([[:space:]]|$)/\1/' /etc/nsswitch.conf
  restart_daemon=1
fi

# The daemon must run from a directory that stays: started from a checkout that is later removed
# (a CI clone), its working directory is gone, and every rsync it runs (snapshots on the dir pool)
# fails with "getcwd(): No such file or directory". So it is started from /, and one found running
# from a removed directory is started again.
daemon="$(pgrep -xo lxd || true)"
if [ -n "$daemon" ] && [[ "$(readlink "/proc/$daemon/cwd" 2>/dev/null)" == *" (deleted)" ]] \
  && ! { command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; }; then
  echo "restarting the LXD daemon: the directory it was started from has been removed"
  lxd shutdown --timeout 60 >/dev/null 2>&1 || kill "$daemon" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.2; done
fi

# A daemon that must see new id ranges or lxcfs starts again; SIGTERM leaves its containers running
# (`lxd shutdown` would stop them), and they take the change at their next start.
daemon="$(pgrep -xo lxd || true)"
if [ -n "$restart_daemon" ] && [ -n "$daemon" ]; then
  echo "restarting the LXD daemon to take up the id ranges and lxcfs (its containers keep running)"
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    systemctl restart lxd
  else
    kill -TERM "$daemon" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.2; done
  fi
fi

if ! lxc query /1.0 >/dev/null 2>&1; then
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    systemctl start lxd
  else
    echo "starting the LXD daemon (no systemd here; log /var/log/lxd/daemon.log)"
    mkdir -p /var/log/lxd
    # Detached as lxcfs is, so stopping the caller's shell or job does not stop LXD, with the
    # open-files limit the production guide asks for.
    (cd / && { ulimit -n 1048576 2>/dev/null || true; } && exec setsid lxd --group root) \
      </dev/null >>/var/log/lxd/daemon.log 2>&1 &
  fi
  lxd waitready --timeout 60
fi

if lxc storage show default >/dev/null 2>&1 && lxc profile device get default root pool >/dev/null 2>&1; then
  echo "LXD is initialised (socket $socket)"
else
  echo "initialising LXD: dir storage pool, no managed network"
  lxd init --preseed <<'PRESEED'
config: {}
networks: []
storage_pools:
- name: default
  driver: dir
  config: {}
profiles:
- name: default
  config: {}
  description: Default LXD profile
  devices:
    root:
      path: /
      pool: default
      type: disk
PRESEED
  echo "LXD is initialised (socket $socket)"
fi

# Disk sizes: the `dir` pool cannot enforce a root disk's size (LXD logs "skipping set quota"), so
# machines are made on a btrfs pool, hb-btrfs, where LXD sets a quota (a btrfs qgroup) of the plan's
# size and a new machine is a snapshot clone of its image instead of an unpack. The pool lives on a
# sparse loop file LXD makes (/var/lib/lxd/disks/hb-btrfs.img) of HB_LXD_BTRFS_SIZE GiB, by default
# 80% of the space free where /var/lib/lxd lives (at least 5). The `default` pool is kept: machines
# already on it stay there, and the driver uses hb-btrfs for new ones when it exists
# (LXD_STORAGE_POOL, docs/providers.md). A pool already there is kept as it is.
btrfs_pool=hb-btrfs
if lxc storage show "$btrfs_pool" >/dev/null 2>&1; then
  echo "storage pool $btrfs_pool (btrfs): new machines' root disks are sized to their plan"
  # btrfs marks its quota accounting inconsistent when a subvolume goes while its qgroup still
  # counts something (seen here after a day of test runs: "qgroup marked inconsistent, to be
  # deleted qgroup 0/507 has non-zero numbers"), and until a rescan it stops holding machines to
  # their plan's disk (a 1 GiB machine wrote 1.2 GiB, its qgroup reading 2 MiB). A rescan mends it.
  pool_dir=/var/lib/lxd/storage-pools/$btrfs_pool
  if command -v btrfs >/dev/null 2>&1 && btrfs qgroup show "$pool_dir" 2>&1 | grep -q "inconsistent"; then
    echo "storage pool $btrfs_pool: quota accounting inconsistent, rescanning"
    btrfs quota rescan -w "$pool_dir" >/dev/null 2>&1 || echo "btrfs quota rescan failed on $pool_dir" >&2
  fi
else
  if ! grep -qw btrfs /proc/filesystems; then modprobe btrfs >/dev/null 2>&1 || true; fi
  if grep -qw btrfs /proc/filesystems && ! command -v mkfs.btrfs >/dev/null 2>&1; then
    echo "installing btrfs-progs from Debian (for the btrfs storage pool)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends btrfs-progs >/dev/null) \
      || echo "btrfs-progs could not be installed" >&2
  fi
  reason=""
  if ! grep -qw btrfs /proc/filesystems; then
    reason="this kernel has no btrfs"
  elif ! command -v mkfs.btrfs >/dev/null 2>&1; then
    reason="btrfs-progs is not installed"
  else
    free_gib=$(($(df -P -k /var/lib/lxd | awk 'NR==2 {print $4}') / 1048576))
    size="${HB_LXD_BTRFS_SIZE:-$((free_gib * 8 / 10))}"
    [ "$size" -ge 5 ] 2>/dev/null || size=5
    echo "creating storage pool $btrfs_pool: btrfs on a ${size} GiB sparse loop file"
    if ! out="$(lxc storage create "$btrfs_pool" btrfs "size=${size}GiB" 2>&1)"; then
      reason="LXD could not create it: $out"
    fi
  fi
  if [ -n "$reason" ]; then
    echo "no btrfs storage pool ($reason): machines go on the dir pool \`default\`, where LXD cannot" \
      "enforce root disk sizes (a machine may write past its plan's disk, and its disk use reads 0)" >&2
  fi
fi

# Machine networks (docs/providers.md): only when asked, with HB_LXD_NETWORK_SUBNET (e.g.
# 198.18.0.0/16; compute's LXD_NETWORK_POOL must name the same pool). Without it machines have no
# network card and are reached through their SSH proxy on 127.0.0.1 only.
if [ -n "${HB_LXD_NETWORK_SUBNET:-}" ]; then
  "$(dirname "$0")/network.sh"
else
  echo "no machine network (set HB_LXD_NETWORK_SUBNET, e.g. 198.18.0.0/16, to give machines one)"
fi
