import ipaddr from "ipaddr.js";

/**
 * Whether a webhook may be sent to an address. Only public unicast addresses: every
 * special-purpose range is refused, including IPv4 hidden in IPv6 (mapped, NAT64, 6to4), unless
 * loopback is explicitly allowed (tests with a local receiver).
 */
const DOCUMENTATION_V4 = [
  ["192.0.2.0", 24],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["192.0.0.0", 24],
] as const;

export function isBlockedAddress(text: string, allowLoopback = false): boolean {
  if (!ipaddr.isValid(text)) return true;
  let addr = ipaddr.parse(text);
  if (addr.kind() === "ipv6") {
    const v6 = addr as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) addr = v6.toIPv4Address();
    else {
      const range = v6.range();
      // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) embed an IPv4 address: judge that one.
      if (range === "rfc6052" || range === "6to4") return true;
      if (range === "loopback") return !allowLoopback;
      return range !== "unicast";
    }
  }
  const v4 = addr as ipaddr.IPv4;
  const range = v4.range();
  if (range === "loopback") return !allowLoopback;
  if (range !== "unicast") return true;
  return DOCUMENTATION_V4.some(([net, bits]) => v4.match(ipaddr.IPv4.parse(net), bits));
}
