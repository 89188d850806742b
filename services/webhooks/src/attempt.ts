import type { LookupAddress } from "node:dns";
import https from "node:https";
import { http } from "@hb/platform/node-http";
import ipaddr from "ipaddr.js";
import { bareHost, isLocalName, isPublicAddress } from "./address-policy.ts";
import { destinationOf } from "./allowed-destinations.ts";
import { type Resolve, resolveAll } from "./endpoint.ts";

export const USER_AGENT = "Service-Reseller-Webhook/1.0";

export interface AttemptResult {
  ok: boolean;
  status?: number;
  error?: string;
}

const BLOCKED = "Host resolves to a private, loopback or reserved address (blocked)";

/**
 * Resolves the host now, refuses it if any address is not public (unless the URL's exact
 * `host:port` is on the operator's allowed list), and connects to the address that was checked
 * (the request's `lookup` returns it), so a name cannot swap to a private address between the
 * check and the connection. The URL was checked when saved; this repeats the whole check, since
 * names move and the allowed list may have lost the entry since. Redirects are never followed.
 */
export async function attemptDelivery(
  url: string,
  body: string,
  headers: Record<string, string>,
  opts: { timeoutMs: number; allowed: ReadonlySet<string>; resolve?: Resolve },
): Promise<AttemptResult> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { ok: false, error: "Invalid webhook URL" };
  }
  const allowed = opts.allowed.has(destinationOf(target));
  const host = bareHost(target.hostname);
  let addresses: LookupAddress[];
  if (ipaddr.isValid(host)) addresses = [{ address: host, family: host.includes(":") ? 6 : 4 }];
  else {
    if (!allowed && isLocalName(host)) return { ok: false, error: BLOCKED };
    try {
      addresses = await (opts.resolve ?? resolveAll)(host);
    } catch {
      return { ok: false, error: "Host could not be resolved" };
    }
  }
  if (addresses.length === 0) return { ok: false, error: "Host could not be resolved" };
  if (!allowed && addresses.some((a) => !isPublicAddress(a.address))) return { ok: false, error: BLOCKED };
  const pinned = addresses[0];
  const client = target.protocol === "https:" ? https : http;
  return new Promise<AttemptResult>((resolve) => {
    const req = client.request(
      target,
      {
        method: "POST",
        headers: { ...headers, "Content-Length": Buffer.byteLength(body).toString() },
        lookup: (_hostname, options, callback) => {
          // Node asks with {all: true} on newer versions and expects an array then.
          if ((options as { all?: boolean }).all)
            (callback as (e: null, a: LookupAddress[]) => void)(null, [pinned]);
          else callback(null, pinned.address, pinned.family);
        },
        timeout: opts.timeoutMs,
      },
      (res) => {
        res.resume();
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400)
          resolve({ ok: false, status, error: "Endpoint returned a redirect, not followed" });
        else if (status >= 200 && status < 300) resolve({ ok: true, status });
        else resolve({ ok: false, status, error: `Endpoint answered HTTP ${status}` });
      },
    );
    const deadline = setTimeout(() => req.destroy(new Error("timeout")), opts.timeoutMs);
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (err: NodeJS.ErrnoException) => {
      clearTimeout(deadline);
      resolve({
        ok: false,
        error:
          err.message === "timeout"
            ? `No answer within ${Math.round(opts.timeoutMs / 1000)} s`
            : err.code?.startsWith("ERR_TLS") || /certificate|SSL|TLS/i.test(err.message)
              ? `TLS failure: ${err.code ?? err.message}`
              : `Connection failed: ${err.code ?? err.message}`,
      });
    });
    req.on("close", () => clearTimeout(deadline));
    req.end(body);
  });
}
