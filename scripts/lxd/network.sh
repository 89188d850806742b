#!/usr/bin/env bash
# The host's side of machine networking for the `lxd` driver (run as root by scripts/lxd/setup.sh when
# HB_LXD_NETWORK_SUBNET is set; safe to run again). The driver makes one LXD bridge per customer
# (hbn<N>, a subnet of the pool each); this script makes what they all share:
#   - the bridge hbapt holding the pool's first address, where apt-cacher-ng listens (port 3142),
#     and nothing else: the one path out a machine has is package downloads through that proxy;
#   - the firewall for every hbn* bridge: a machine may reach the apt proxy and answer the host,
#     nothing else of the host (PostgreSQL, Redis, NATS, gRPC, the gateway, LXD: every port, on every
#     host address) and nothing routed (another customer's bridge, the outside), IPv4 and IPv6.
# The pool must not be a private range (10/8, 172.16/12, 192.168/16): those are reserved here for
# networks the host does not own. Default: 198.18.0.0/16, inside the benchmarking range.
set -euo pipefail

subnet="${HB_LXD_NETWORK_SUBNET:-198.18.0.0/16}"
proxy_port="${HB_LXD_APT_PROXY_PORT:-3142}"

if ! [[ "$subnet" =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)\.([0-9]+)/([0-9]+)$ ]]; then
  echo "HB_LXD_NETWORK_SUBNET=$subnet is not an IPv4 CIDR (e.g. 198.18.0.0/16)" >&2
  exit 1
fi
a=${BASH_REMATCH[1]} b=${BASH_REMATCH[2]} c=${BASH_REMATCH[3]} d=${BASH_REMATCH[4]} bits=${BASH_REMATCH[5]}
if [ "$bits" -lt 15 ] || [ "$bits" -gt 23 ] || [ "$d" != 0 ]; then
  echo "HB_LXD_NETWORK_SUBNET=$subnet: the pool must be a /15 to /23 starting on a /24 boundary" >&2
  exit 1
fi
if [ "$a" = 10 ] || { [ "$a" = 172 ] && [ "$b" -ge 16 ] && [ "$b" -le 31 ]; } || { [ "$a" = 192 ] && [ "$b" = 168 ]; }; then
  echo "HB_LXD_NETWORK_SUBNET=$subnet is a private range; use one this host owns (e.g. 198.18.0.0/16)" >&2
  exit 1
fi
proxy_address="$a.$b.$c.1"

for tool in iptables:iptables ip6tables:iptables apt-cacher-ng:apt-cacher-ng; do
  if ! command -v "${tool%%:*}" >/dev/null 2>&1; then
    echo "installing ${tool#*:} from Debian"
    apt-get update -qq
    # The package's own start is refused where there is no init system; it is started below.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${tool#*:}" >/dev/null
  fi
done

# The proxy's bridge: LXD keeps it (and its address) across restarts. No DHCP, DNS, NAT or routing:
# the host's firewall below is the only one (LXD's would accept DNS and DHCP before it).
net_config=(ipv4.nat=false ipv4.firewall=false ipv4.routing=false ipv4.dhcp=false ipv6.address=none dns.mode=none)
if ! lxc network show hbapt >/dev/null 2>&1; then
  echo "creating the bridge hbapt ($proxy_address/24) for the apt proxy"
  lxc network create hbapt "ipv4.address=$proxy_address/24" "${net_config[@]}"
elif [ "$(lxc network get hbapt ipv4.address)" != "$proxy_address/24" ]; then
  lxc network set hbapt "ipv4.address=$proxy_address/24"
fi

# Rules are rebuilt whole each run in chains of their own, hooked once into INPUT and FORWARD.
firewall() { # iptables|ip6tables
  local t=$1
  for chain in HB-NET-IN HB-NET-FWD; do
    $t -N "$chain" 2>/dev/null || $t -F "$chain"
  done
  $t -A HB-NET-IN -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT
  if [ "$t" = iptables ]; then
    $t -A HB-NET-IN -d "$proxy_address" -p tcp --dport "$proxy_port" -j ACCEPT
  fi
  $t -A HB-NET-IN -j DROP
  # Two machines of one customer share a bridge and never pass here, unless br_netfilter makes
  # bridged frames go through FORWARD: those are let through (same bridge), routed ones are not.
  if $t -A HB-NET-FWD -m physdev --physdev-is-bridged -j ACCEPT 2>/dev/null; then :; fi
  $t -A HB-NET-FWD -j DROP
  $t -C INPUT -i hbn+ -j HB-NET-IN 2>/dev/null || $t -I INPUT 1 -i hbn+ -j HB-NET-IN
  $t -C FORWARD -i hbn+ -j HB-NET-FWD 2>/dev/null || $t -I FORWARD 1 -i hbn+ -j HB-NET-FWD
  $t -C FORWARD -o hbn+ -j HB-NET-FWD 2>/dev/null || $t -I FORWARD 1 -o hbn+ -j HB-NET-FWD
}
firewall iptables
firewall ip6tables
echo "firewall: machines on hbn* bridges reach only the apt proxy $proxy_address:$proxy_port on this host"

# apt-cacher-ng on the proxy's address only (never 0.0.0.0: it would be an open proxy to the world).
# Requests for any Debian mirror go to one (HB_APT_MIRROR, default deb.debian.org): without a
# backend apt-cacher-ng picks from its list of mirrors, whose names this host may not resolve.
acng_changed=""
write_acng() { # file content
  [ "$(cat "$1" 2>/dev/null)" = "$2" ] && return
  echo "$2" >"$1"
  acng_changed=1
}
write_acng /etc/apt-cacher-ng/zz_hb.conf "$(printf 'BindAddress: %s\nPort: %s' "$proxy_address" "$proxy_port")"
write_acng /etc/apt-cacher-ng/backends_debian "${HB_APT_MIRROR:-http://deb.debian.org/debian/}"
acng_pid="$(pgrep -xo apt-cacher-ng || true)"
if [ -n "$acng_pid" ] && [ -n "$acng_changed" ]; then
  # Started before this configuration: started again to read it.
  kill "$acng_pid"
  for _ in $(seq 1 50); do kill -0 "$acng_pid" 2>/dev/null || break; sleep 0.1; done
fi
if ! (exec 3<>"/dev/tcp/$proxy_address/$proxy_port") 2>/dev/null; then
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    systemctl restart apt-cacher-ng
  else
    echo "starting apt-cacher-ng (log /var/log/apt-cacher-ng)"
    mkdir -p /run/apt-cacher-ng && chown apt-cacher-ng: /run/apt-cacher-ng
    (cd / && exec setsid runuser -u apt-cacher-ng -- apt-cacher-ng -c /etc/apt-cacher-ng ForeGround=1) \
      </dev/null >>/var/log/apt-cacher-ng/daemon.log 2>&1 &
  fi
  for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/$proxy_address/$proxy_port") 2>/dev/null && break; sleep 0.1; done
fi
if (exec 3<>"/dev/tcp/$proxy_address/$proxy_port") 2>/dev/null; then
  echo "apt proxy: http://$proxy_address:$proxy_port (apt-cacher-ng)"
else
  echo "apt-cacher-ng does not answer on $proxy_address:$proxy_port (see /var/log/apt-cacher-ng)" >&2
  exit 1
fi
