import ipaddr from "ipaddr.js";

const MAX_ALLOWLIST_ENTRIES = 50;

export type AllowlistResult = { ok: true; entries: string[] } | { ok: false; message: string };

/** Parses "addr, cidr\naddr" into normalised entries; refuses a bad entry by name. */
export function parseAllowlist(raw: string): AllowlistResult {
  const parts = raw
    .split(/[,\n\r]+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (parts.length > MAX_ALLOWLIST_ENTRIES) {
    return {
      ok: false,
      message: `At most ${MAX_ALLOWLIST_ENTRIES} allowlist entries are allowed (got ${parts.length})`,
    };
  }
  const entries: string[] = [];
  for (const part of parts) {
    const normalised = normaliseEntry(part);
    if (!normalised) return { ok: false, message: `"${part}" is not a valid IP address or CIDR range` };
    if (!entries.includes(normalised)) entries.push(normalised);
  }
  return { ok: true, entries };
}

function normaliseEntry(entry: string): string | undefined {
  try {
    if (entry.includes("/")) {
      if (!ipaddr.isValidCIDR(entry)) return undefined;
      const [addr, bits] = ipaddr.parseCIDR(entry);
      return `${addr.toString()}/${bits}`;
    }
    if (!ipaddr.isValid(entry)) return undefined;
    // Refuse shorthand such as "10.1" that ipaddr accepts as legacy IPv4.
    if (!entry.includes(":") && !ipaddr.IPv4.isValidFourPartDecimal(entry)) return undefined;
    return ipaddr.parse(entry).toString();
  } catch {
    return undefined;
  }
}

/** An IPv4-mapped IPv6 source (::ffff:1.2.3.4, as Node reports on dual-stack sockets) counts as IPv4. */
function parseSource(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (!ipaddr.isValid(ip)) return undefined;
  const addr = ipaddr.parse(ip);
  return addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress()
    ? (addr as ipaddr.IPv6).toIPv4Address()
    : addr;
}

/** Empty allowlist means any source. */
export function allowlistPermits(entries: readonly string[], sourceIp: string): boolean {
  if (entries.length === 0) return true;
  const source = parseSource(sourceIp);
  if (!source) return false;
  for (const entry of entries) {
    const [addrText, bitsText] = entry.split("/");
    const addr = ipaddr.parse(addrText);
    if (addr.kind() !== source.kind()) continue;
    const bits = bitsText === undefined ? (addr.kind() === "ipv4" ? 32 : 128) : Number(bitsText);
    if (source.match(addr, bits)) return true;
  }
  return false;
}

/**
 * The address a client is counted under by the throttles of failed authentication and sign-in: an
 * IPv4 address as is, an IPv6 address by its /64 (one subscriber's usual allocation, so rotating
 * through it gains nothing), an IPv4-mapped IPv6 address as its IPv4 form.
 */
export function throttleSubject(sourceIp: string): string {
  if (!ipaddr.isValid(sourceIp)) return sourceIp.slice(0, 64);
  const addr = ipaddr.process(sourceIp);
  if (addr.kind() === "ipv4") return addr.toString();
  const parts = (addr as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((p) => p.toString(16)).join(":")}::/64`;
}
