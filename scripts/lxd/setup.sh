#!/usr/bin/env bash
# One-time LXD set-up for the `lxd` compute driver (run as root; safe to run again).
# Installs Debian's lxd, starts the daemon without systemd when it is not running, and initialises it
# with a preseed: a `dir` storage pool, the root disk in the default profile and no managed network.
# `lxd init --auto` would try to create a bridge on a free private subnet; machines here have none, and
# tests reach containers through proxy devices on 127.0.0.1 instead, so no bridge is made.
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

socket=/var/lib/lxd/unix.socket

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

if ! lxc query /1.0 >/dev/null 2>&1; then
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    systemctl start lxd
  else
    echo "starting the LXD daemon (no systemd here)"
    mkdir -p /var/log/lxd
    (cd / && nohup lxd --group root >>/var/log/lxd/daemon.log 2>&1 &)
  fi
  lxd waitready --timeout 60
fi

if lxc storage show default >/dev/null 2>&1 && lxc profile device get default root pool >/dev/null 2>&1; then
  echo "LXD is initialised (socket $socket)"
  exit 0
fi

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
