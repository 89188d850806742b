import ipaddr from "ipaddr.js";

/**
 * What a webhook may reach: public unicast addresses and public host names. Everything else
 * (loopback, private, link-local, shared, documentation, benchmarking, multicast, reserved) is
 * refused, however it is spelt. The only way past it is an operator's exact `host:port` entry
 * (`allowed-destinations.ts`), checked by the callers before they ask this module.
 */

// IANA allocates global unicast IPv6 only from 2000::/3. Judging by "inside 2000::/3 and in no
// special range" instead of by a list of bad ranges also refuses the spellings no list names:
// IPv4-compatible ::a.b.c.d (::/96, e.g. ::7f00:1 = 127.0.0.1), ::ffff:0:a.b.c.d, 100::/64.
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR("2000::/3");
// DNS64 networks hand out 64:ff9b::<IPv4> for IPv4-only hosts, so the well-known NAT64 prefix is
// judged by the IPv4 address in its last 32 bits. The local-use prefix 64:ff9b:1::/48 (RFC 8215)
// lies outside 2000::/3 and is refused with the rest.
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR("64:ff9b::/96");

function isPublicV4(addr: ipaddr.IPv4): boolean {
  // ipaddr.js names every special-purpose IPv4 block (RFC 6890 and later, including the
  // documentation, benchmarking, 6to4-relay and 240/4 blocks as "reserved"); what is left is
  // "unicast".
  return addr.range() === "unicast";
}

/** Whether `text` is an IP address a delivery may connect to. Anything unparseable is not. */
export function isPublicAddress(text: string): boolean {
  if (!ipaddr.isValid(text)) return false;
  const addr = ipaddr.parse(text);
  if (addr.kind() === "ipv4") return isPublicV4(addr as ipaddr.IPv4);
  const v6 = addr as ipaddr.IPv6;
  // A zone id only exists for scoped (link-local) destinations.
  if (v6.zoneId) return false;
  if (v6.isIPv4MappedAddress()) return isPublicV4(v6.toIPv4Address());
  if (v6.match(NAT64_WELL_KNOWN)) {
    const [, , , , , , hi, lo] = v6.parts;
    return isPublicV4(new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]));
  }
  // 6to4 (2002::/16) and Teredo (2001::/32) tunnel to an IPv4 address of their own (embedded, and
  // for Teredo obfuscated); both are deprecated, so they are refused outright rather than decoded.
  // ipaddr.js reports them, and every other special block inside 2000::/3, as a named range.
  return v6.match(GLOBAL_UNICAST_V6) && v6.range() === "unicast";
}

/** A URL's host as the rules compare it: lower case, without brackets or a trailing dot. */
export function bareHost(hostname: string): string {
  return hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.+$/, "");
}

// Names that never lead to a public host: RFC 6761 (localhost), mDNS (RFC 6762 .local and the
// private-use names of its appendix G), RFC 8375 (home.arpa) and ICANN's private-use .internal.
const LOCAL_SUFFIXES = [
  "localhost",
  "local",
  "localdomain",
  "internal",
  "intranet",
  "private",
  "corp",
  "home",
  "lan",
  "home.arpa",
];

/**
 * Whether a host name (as `bareHost` gives it) is local by its spelling alone: a single label
 * (resolved through search domains to the local network) or a name under a local-use suffix.
 */
export function isLocalName(name: string): boolean {
  if (!name.includes(".")) return true;
  return LOCAL_SUFFIXES.some((s) => name === s || name.endsWith(`.${s}`));
}
