import { bareHost } from "./address-policy.ts";

/**
 * The operator's exceptions to the address policy: exact `host:port` destinations (a development
 * receiver on loopback, say) that a webhook URL may name although its host is not public. A URL
 * matches only when both its host, as the URL spells it, and its port are the same, so allowing
 * `127.0.0.1:4567` allows neither `127.0.0.1:4568` nor `localhost:4567`.
 */

/** How the list spells a host: lower case, no trailing dot, IPv6 in brackets. */
const listHost = (hostname: string) => {
  const bare = bareHost(hostname);
  return bare.includes(":") ? `[${bare}]` : bare;
};

/** The destination a URL leads to: its normalised host and its port (explicit or the scheme's). */
export function destinationOf(url: URL): string {
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return `${listHost(url.hostname)}:${port}`;
}

/**
 * An operator's entry in the form `destinationOf` gives, normalised the way a URL normalises its
 * host (so `LOCALHOST.:80` is `localhost:80` and `[0::1]:80` is `[::1]:80`), or undefined when
 * it is not a host and a port.
 */
export function parseDestination(entry: string): string | undefined {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^\s:/?#@[\]\\%]+):(\d{1,5})$/.exec(entry.trim());
  if (!m) return undefined;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return undefined;
  let url: URL;
  try {
    url = new URL(`http://${m[1]}/`);
  } catch {
    return undefined;
  }
  const host = listHost(url.hostname);
  return host === "" ? undefined : `${host}:${port}`;
}
