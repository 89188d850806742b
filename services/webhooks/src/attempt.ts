import type { LookupAddress } from "node:dns";
import ipaddr from "ipaddr.js";
import type { Pool } from "undici";
import { bareHost, isLocalName, isPublicAddress } from "./address-policy.ts";
import { destinationOf } from "./allowed-destinations.ts";
import { watchDeadline } from "./attempt-deadline.ts";
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
 * (its pool's connect `lookup` returns it), so a name cannot swap to a private address between the
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
  // The pool first: the first attempt in a process loads undici, which is no part of the
  // endpoint's time (in the unit tests' shared process on a loaded CI host, that load once took
  // an attempt past its 2 s deadline, and its request reached the endpoint after the test).
  let pool: Pool;
  try {
    pool = await poolFor(target, addresses[0]);
  } catch (e) {
    return { ok: false, error: `Connection failed: ${(e as Error).message}` };
  }
  // The whole attempt's deadline (undici's own header and body timeouts are longer).
  const deadline = new AbortController();
  const settled = watchDeadline(opts.timeoutMs, (reason) => deadline.abort(reason));
  try {
    const res = await pool.request({
      path: `${target.pathname}${target.search}`,
      method: "POST",
      headers: { ...headers, "content-length": Buffer.byteLength(body).toString() },
      body,
      signal: deadline.signal,
    });
    // The answer's body is read and dropped (up to undici's limit, then the connection is closed).
    await res.body.dump();
    const status = res.statusCode;
    if (status >= 300 && status < 400)
      return { ok: false, status, error: "Endpoint returned a redirect, not followed" };
    if (status >= 200 && status < 300) return { ok: true, status };
    return { ok: false, status, error: `Endpoint answered HTTP ${status}` };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const timedOut = err.name === "TimeoutError" || err.code === "UND_ERR_CONNECT_TIMEOUT";
    return {
      ok: false,
      error: timedOut
        ? `No answer within ${Math.round(opts.timeoutMs / 1000)} s`
        : err.code?.startsWith("ERR_TLS") || /certificate|SSL|TLS/i.test(err.message)
          ? `TLS failure: ${err.code ?? err.message}`
          : `Connection failed: ${err.code ?? err.message}`,
    };
  } finally {
    settled();
  }
}

type Undici = typeof import("undici");
let undici: Promise<Undici> | undefined;
/** Connection pools by origin and the address their connections go to, least recently used first. */
const pools = new Map<string, Pool>();
/** Pools kept at most: past it the least recently used is closed (its requests finish first). */
const MAX_POOLS = 256;

/**
 * The pool whose connections go to `pinned`, the address checked for this attempt, for the URL's
 * origin (its name stays the TLS server name and the Host header). undici's pool, not node:http's
 * agent: it spends about half the CPU per request (26–43 µs against 66–84 µs on this machine,
 * docs/benchmarks.md), and deliveries are most of what this service does. Loaded at the first
 * delivery, so a webhooks process that sends nothing does not carry it (about 8 MB).
 */
async function poolFor(target: URL, pinned: LookupAddress): Promise<Pool> {
  const key = `${target.origin} ${pinned.address}`;
  const held = pools.get(key);
  if (held) {
    pools.delete(key);
    pools.set(key, held);
    return held;
  }
  undici ??= import("undici");
  const { Pool } = await undici;
  const again = pools.get(key);
  if (again) return again;
  const pool = new Pool(target.origin, {
    connect: {
      // Every connection goes to the checked address, whatever the name resolves to by then.
      lookup: (_hostname, options, callback) => {
        // Node asks with {all: true} on newer versions and expects an array then.
        if ((options as { all?: boolean }).all)
          (callback as (e: null, a: LookupAddress[]) => void)(null, [pinned]);
        else callback(null, pinned.address, pinned.family);
      },
    },
  });
  pools.set(key, pool);
  if (pools.size > MAX_POOLS) {
    const [oldest, p] = pools.entries().next().value as [string, Pool];
    pools.delete(oldest);
    void p.close().catch(() => {});
  }
  return pool;
}
