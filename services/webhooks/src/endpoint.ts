import type { LookupAddress } from "node:dns";
import { lookup } from "node:dns/promises";
import { badRequest } from "@hb/platform";
import ipaddr from "ipaddr.js";
import { bareHost, isLocalName, isPublicAddress } from "./address-policy.ts";
import { destinationOf } from "./allowed-destinations.ts";

/** Every address a name resolves to now (the real resolver unless a test passes its own). */
export type Resolve = (host: string) => Promise<LookupAddress[]>;
export const resolveAll: Resolve = (host) => lookup(host, { all: true, verbatim: true });

/**
 * How long saving a URL waits for its name to resolve. Past it the name counts as one that does
 * not resolve yet (checked again at every delivery): a resolver that does not answer (glibc waits
 * 5 s per try) must not hold the save past the caller's 5 s deadline.
 */
const RESOLVE_WAIT_MS = 2_000;

/**
 * Checks a webhook URL when it is saved (the request's declared rules have already required an
 * explicit http(s) scheme and at most 2000 characters): a host, no credentials, and a
 * public destination: a public address, or a name that is not local by its spelling and resolves
 * now only to public addresses. A name that does not resolve yet is accepted: it is resolved
 * again, and checked, at every delivery. A destination on the operator's allowed list passes as
 * it is. Returns the URL as it is stored (WHATWG-serialised, so every spelling of an IPv4 host,
 * such as `2130706433` or `0x7f.1`, is already its dotted form here).
 */
export async function checkWebhookUrl(
  raw: string,
  allowed: ReadonlySet<string>,
  resolve: Resolve = resolveAll,
  resolveWaitMs = RESOLVE_WAIT_MS,
): Promise<string> {
  const text = raw.trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw badRequest("url", "url must be an absolute URL with an explicit http or https scheme");
  }
  if (url.username || url.password) throw badRequest("url", "url must not carry credentials");
  if (allowed.has(destinationOf(url))) return url.toString();

  const host = bareHost(url.hostname);
  if (ipaddr.isValid(host)) {
    if (!isPublicAddress(host)) {
      throw badRequest("url", "url must point to a public host, not a loopback, private or reserved address");
    }
    return url.toString();
  }
  if (isLocalName(host)) throw badRequest("url", "url must point to a public host name");
  const addresses = await Promise.race([
    resolve(host).catch(() => []),
    new Promise<LookupAddress[]>((r) => setTimeout(r, resolveWaitMs, []).unref()),
  ]);
  if (addresses.some((a) => !isPublicAddress(a.address))) {
    throw badRequest("url", "url resolves to a loopback, private or reserved address");
  }
  return url.toString();
}
