/**
 * Machine networking for the lxd driver: one LXD bridge per customer, each a subnet of the configured
 * pool. A customer's machines share its bridge (they reach each other); two customers' bridges are
 * not connected, and the host's firewall (scripts/lxd/network.sh) drops whatever a machine sends to
 * the host or to be routed, except to the apt proxy. See docs/providers.md.
 *
 * Per-customer bridges rather than LXD network ACLs on one shared bridge: LXD 5.0 applies ACLs on a
 * bridge only with its nftables firewall driver, and hosts here have iptables (the xtables driver), so
 * ACLs would be refused; separate bridges isolate with nothing LXD has to enforce.
 */
import { createHash } from "node:crypto";
import type { IpRow } from "../machines.ts";
import { type LxdClient, LxdError } from "./client.ts";

/** The first /24 of the pool is the host's (the apt proxy's bridge, hbapt); customers get the rest. */
const HOST_BLOCK = 256;
/** Every customer bridge's name starts so; the host firewall matches the prefix (hbn+). */
export const BRIDGE_PREFIX = "hbn";

/** A machine's place on its customer's network, kept in the job's and the machine's driver state. */
export interface MachineNetwork {
  bridge: string;
  /** the customer's subnet, a.b.c.d/prefix */
  subnet: string;
  /** the bridge's (host's) address: the machine's gateway */
  gateway: string;
  address: string;
}

export interface Pool {
  base: number;
  bits: number;
}

const toInt = (ip: string) => ip.split(".").reduce((n, part) => n * 256 + Number(part), 0);
const toIp = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join(".");

/** A pool CIDR read, or an error saying what is wrong with it. Private ranges are refused. */
export function parsePool(cidr: string): Pool {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(cidr.trim());
  if (!m || m.slice(1, 5).some((p) => Number(p) > 255))
    throw new Error(`LXD_NETWORK_POOL ${cidr} is not an IPv4 CIDR`);
  const bits = Number(m[5]);
  const base = toInt(m.slice(1, 5).join("."));
  if (bits < 15 || bits > 23 || base % 256 !== 0 || base % 2 ** (32 - bits) !== 0)
    throw new Error(`LXD_NETWORK_POOL ${cidr} must be a /15 to /23 network`);
  const [a, b] = [Number(m[1]), Number(m[2])];
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168))
    throw new Error(
      `LXD_NETWORK_POOL ${cidr} is a private range; use one this host owns (e.g. 198.18.0.0/16)`,
    );
  return { base, bits };
}

/** The apt proxy's address: the pool's first host address (on the bridge hbapt). */
export const proxyAddressOf = (pool: Pool) => toIp(pool.base + 1);

/** How many customer subnets of /prefix the pool holds after its host block. */
export const subnetCount = (pool: Pool, prefix: number) =>
  Math.floor((2 ** (32 - pool.bits) - HOST_BLOCK) / 2 ** (32 - prefix));

/** The customer subnet number `index` (0-based) of /prefix: its bridge, network and gateway. */
export function subnetAt(pool: Pool, prefix: number, index: number) {
  if (prefix < 24 || prefix > 29) throw new Error(`a customer subnet must be /24 to /29, not /${prefix}`);
  if (!Number.isInteger(index) || index < 0 || index >= subnetCount(pool, prefix))
    throw new Error(`the pool has no customer subnet number ${index}`);
  const start = pool.base + HOST_BLOCK + index * 2 ** (32 - prefix);
  return {
    bridge: `${BRIDGE_PREFIX}${index}`,
    subnet: `${toIp(start)}/${prefix}`,
    gateway: toIp(start + 1),
    /** machine addresses: after the gateway, before the broadcast address */
    hosts: { first: start + 2, last: start + 2 ** (32 - prefix) - 2 },
  };
}

/** The lowest machine address of the subnet not in `taken`, or undefined when it is full. */
export function freeAddress(subnet: ReturnType<typeof subnetAt>, taken: Iterable<string>) {
  const used = new Set(taken);
  for (let n = subnet.hosts.first; n <= subnet.hosts.last; n++) if (!used.has(toIp(n))) return toIp(n);
  return undefined;
}

const prefixOf = (net: MachineNetwork) => Number(net.subnet.split("/")[1]);

/** The LXD network a customer's bridge is: addresses only, no DHCP, DNS, NAT or LXD firewall rules. */
export const bridgeBody = (net: MachineNetwork) => ({
  name: net.bridge,
  type: "bridge",
  description: "hb customer network",
  config: {
    "ipv4.address": `${net.gateway}/${prefixOf(net)}`,
    "ipv4.nat": "false",
    // The host's own firewall is the only one: LXD's would accept DNS and DHCP ahead of it.
    "ipv4.firewall": "false",
    // LXD would switch on IP forwarding for a routed bridge; nothing is routed off these.
    "ipv4.routing": "false",
    "ipv4.dhcp": "false",
    "ipv6.address": "none",
    "dns.mode": "none",
  },
});

/** Makes the customer's bridge on the daemon unless it is there. */
export async function ensureBridge(c: LxdClient, net: MachineNetwork) {
  try {
    await c.get(`/1.0/networks/${net.bridge}`);
    return;
  } catch (err) {
    if (!(err instanceof LxdError && err.status === 404)) throw err;
  }
  try {
    await c.send("POST", "/1.0/networks", Buffer.from(JSON.stringify(bridgeBody(net))), {
      "content-type": "application/json",
    });
  } catch (err) {
    // Another job of the same customer made it first.
    if (!(err instanceof LxdError && /exists/i.test(err.message))) throw err;
  }
}

/**
 * The machine's MAC address, the same for every instance of the service: a reinstall keeps its
 * address and MAC together, so its siblings' ARP caches stay right (a new MAC behind the same
 * address is unreachable from them until their entries expire). LXD's own prefix, 00:16:3e.
 */
export function macOf(serviceId: string) {
  const h = createHash("sha256").update(serviceId).digest();
  return ["00", "16", "3e", ...[h[0] & 0x7f, h[1], h[2]].map((b) => b.toString(16).padStart(2, "0"))].join(
    ":",
  );
}

/** The machine's network card on its customer's bridge. */
export const nicDevice = (net: MachineNetwork, serviceId: string) => ({
  type: "nic",
  nictype: "bridged",
  parent: net.bridge,
  name: "eth0",
  hwaddr: macOf(serviceId),
});

const netmask = (prefix: number) => toIp(2 ** 32 - 2 ** (32 - prefix));

/**
 * Files written into the machine at build: its static address (ifupdown's format, which Debian
 * and busybox both read) and apt's proxy, the only way out to a package mirror.
 */
export function guestFiles(net: MachineNetwork, aptProxy: string) {
  return [
    {
      path: "/etc/network/interfaces",
      mode: "0644",
      content: [
        "# Written by the hosting platform at build: this machine's address on its private network.",
        "auto lo",
        "iface lo inet loopback",
        "",
        "auto eth0",
        "iface eth0 inet static",
        `    address ${net.address}`,
        `    netmask ${netmask(prefixOf(net))}`,
        `    gateway ${net.gateway}`,
        "",
      ].join("\n"),
    },
    {
      path: "/etc/apt/apt.conf.d/01hb-proxy",
      mode: "0644",
      content: `// Packages come through the host's apt proxy: machines have no other way out.\nAcquire::http::Proxy "${aptProxy}";\n`,
    },
  ];
}

/** The machine's address as compute records it (its API `ips`). */
export const ipRows = (net: MachineNetwork): IpRow[] => [
  { address: net.address, version: 4, prefix_length: prefixOf(net), purpose: "primary" },
];
