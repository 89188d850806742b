import { create } from "@bufbuild/protobuf";
import { Module, type Principal, PrincipalSchema, type RateLimit } from "@hb/contracts/hb/auth/v1/auth_pb";
import {
  ALL_PERMISSIONS,
  type ErrorCode,
  errorCodes,
  keyFromAuthorization,
  type ParsedKey,
} from "@hb/platform";
import { countHourly } from "@hb/platform/rate-window";
import type { Redis } from "@hb/platform/redis";
import type { Request, Response } from "express";
import type { AuthThrottle } from "./auth-throttle.ts";
import type { RawBodyRequest } from "./body.ts";
import type { Clients } from "./clients.ts";
import type { GatewayConfig } from "./config.ts";
import { sendError } from "./envelope.ts";
import { sessionPartnerStatusOf } from "./in-process.ts";
import { checkKey, type Refusal, unauthenticated } from "./key-check.ts";
import type { KeySync } from "./key-sync.ts";
import { keyChecks } from "./metrics.ts";
import type { RouteNeed } from "./route.ts";
import { sessionRefusal } from "./session-decision.ts";

/**
 * Who a request is: the API key's check (from the key table, or auth.Verify), a portal session's
 * check, and the refusals they send with the rate-limit headers. Each answers the principal, or
 * sends the refusal itself and answers undefined.
 */
export interface RequestAuthDeps {
  cfg: GatewayConfig;
  clients: Clients;
  redis: Redis;
  /** The key table auth streams; without it every keyed request asks auth.Verify. */
  keys?: KeySync;
  /** Slows failed authentication per source address; absent: refusals go out at once. */
  authThrottle?: AuthThrottle;
}

export type RequestAuth = ReturnType<typeof createRequestAuth>;

/** A route's need; an unmatched path or a body without a key checks the key only (scope ""). */
export type Need = Omit<RouteNeed, "scope" | "permissions" | "signed"> &
  Partial<Pick<RouteNeed, "permissions" | "signed">> & { scope: RouteNeed["scope"] | "" };

export const sourceIpOf = (req: Request) => req.ip ?? req.socket.remoteAddress ?? "";

const modules = { inventory: Module.INVENTORY, vps: Module.VPS } as const;

type Window = Pick<RateLimit, "limit" | "remaining"> & { resetSeconds: number };

function setRateLimitHeaders(res: Response, rl: Window): void {
  // The window ends on a whole second (the clock hour), so the seconds are the Unix time.
  const reset = rl.resetSeconds;
  const secondsLeft = Math.max(0, reset - Math.floor(Date.now() / 1000));
  res.setHeader("X-RateLimit-Limit", String(rl.limit));
  res.setHeader("X-RateLimit-Remaining", String(rl.remaining));
  res.setHeader("X-RateLimit-Reset", String(reset));
  // IETF draft-ietf-httpapi-ratelimit-headers fields beside the classic ones.
  res.setHeader("RateLimit-Policy", `"hourly";q=${rl.limit};w=3600`);
  res.setHeader("RateLimit", `"hourly";r=${rl.remaining};t=${secondsLeft}`);
}

const isErrorCode = (c: string): c is ErrorCode => c in errorCodes;

export function createRequestAuth(deps: RequestAuthDeps) {
  const { cfg, clients, redis, keys } = deps;

  /**
   * Sends a refusal of the key check; a missing key's UNAUTHORIZED says what was expected. A
   * presented credential that failed (malformed, unknown, expired or revoked key, bad reseller
   * signature) counts against the source address and may be held first (auth-throttle.ts); a
   * missing header guesses nothing.
   */
  async function sendRefusal(
    req: Request,
    res: Response,
    key: ParsedKey | undefined,
    refusal: Refusal,
  ): Promise<void> {
    const code = isErrorCode(refusal.code) ? refusal.code : "UNAUTHORIZED";
    if (code === "UNAUTHORIZED" && req.headers.authorization !== undefined && deps.authThrottle) {
      const delayMs = await deps.authThrottle.failed(sourceIpOf(req));
      // A slowed client gets no kept-alive connection to fire its next guess on at once.
      if (delayMs > 0) res.setHeader("Connection", "close");
    }
    const message =
      !key && code === "UNAUTHORIZED"
        ? "Missing or malformed Authorization header; expected: Bearer <API key>"
        : refusal.message;
    sendError(res, code, message, {
      scope: refusal.scope || undefined,
      retryAfterSeconds: refusal.retryAfterSeconds || undefined,
    });
  }

  const checked = {
    table: { accepted: keyChecks.labels("table", "accepted"), refused: keyChecks.labels("table", "refused") },
    auth: { accepted: keyChecks.labels("auth", "accepted"), refused: keyChecks.labels("auth", "refused") },
  };

  /**
   * What the key table alone can refuse, before a body is read: undefined if it cannot (also while
   * the table is out of step: auth then checks the key, after the body).
   */
  function earlyRefusal(key: ParsedKey): Refusal | undefined {
    if (!keys?.serving() || !keys.table.settings) return undefined;
    const entry = keys.table.entry(key.prefix);
    if (!entry || entry.revoked || keys.table.matches(entry.keyId, key.full) === false) {
      return unauthenticated(keys.table.settings);
    }
    return undefined;
  }

  /**
   * The key check. From the key table when this replica has one in step with auth
   * (docs/architecture.md, "Key table"): the hourly window is then the one Redis script, and auth
   * is asked only to confirm a key's secret the first time this replica sees the key, and for
   * signed (reseller) routes, whose secret stays in auth. Sets the rate-limit headers. On a
   * refusal the answer is sent and undefined returned. `identified` gets the principal whenever
   * the key was identified, refused or not, so refused requests are logged too.
   */
  async function authenticate(
    req: Request,
    res: Response,
    need: Need,
    identified?: (p: Principal) => void,
  ): Promise<Principal | undefined> {
    const key = keyFromAuthorization(req.headers.authorization);
    const settings = keys?.table.settings;
    // While the table is out of step (its stream lost, or given up by auth under load, until the
    // new snapshot is in) auth.Verify checks the key, as without a table: a revoked key is still
    // refused, and a request meanwhile is slower, not refused with a 503.
    if (!keys || need.signed || !keys.serving() || !settings)
      return remoteAuthenticate(req, res, need, key, identified);
    const entry = key && keys.table.entry(key.prefix);
    const authentic = entry && keys.table.matches(entry.keyId, key.full);
    if (!key || !entry || authentic === false) {
      checked.table.refused.inc();
      await sendRefusal(req, res, key, unauthenticated(settings));
      return undefined;
    }
    if (authentic === undefined) {
      const principal = await remoteAuthenticate(req, res, need, key, (p) => {
        if (p.keyId === entry.keyId) keys.table.confirm(entry.keyId, key.full);
        identified?.(p);
      });
      return principal;
    }

    const window = await countHourly(redis, cfg.HB_NS, entry.keyId, settings.hourlyRequestLimit);
    setRateLimitHeaders(res, {
      limit: window.limit,
      remaining: window.remaining,
      resetSeconds: window.reset,
    });
    const permissions = entry.isOwner ? ALL_PERMISSIONS : entry.permissions;
    const principal = create(PrincipalSchema, {
      customerId: entry.customerId,
      personId: entry.personId,
      keyId: entry.keyId,
      keyLabel: entry.label,
      scopes: entry.scopes,
      permissions,
      isOwner: entry.isOwner,
      accountStatus: entry.accountStatus,
      personName: entry.personName,
      personEmail: entry.personEmail,
      currency: entry.currency,
    });
    identified?.(principal);
    const refusal = checkKey(
      entry,
      settings,
      { scope: need.scope, permissionsAny: need.permissions ?? [], write: need.write, module: need.module },
      permissions,
      sourceIpOf(req),
      window,
      Date.now(),
    );
    if (refusal) {
      checked.table.refused.inc();
      await sendRefusal(req, res, key, refusal);
      return undefined;
    }
    checked.table.accepted.inc();
    return principal;
  }

  /**
   * The check of a portal session's in-process call (in-process.ts): sessionRefusal
   * (session-decision.ts) with the company's module switches; on a signed (reseller) route the
   * session's partner status stands in for the one auth reads beside the signature.
   */
  async function sessionCheck(
    req: Request,
    res: Response,
    need: Need,
    p: Principal,
  ): Promise<Principal | undefined> {
    const s =
      keys?.serving() && keys.table.settings
        ? keys.table.settings
        : (await clients.pages.auth.getSettings({})).settings;
    const refusal = sessionRefusal(
      p,
      { scope: need.scope, permissionsAny: need.permissions ?? [], write: need.write, module: need.module },
      s,
      need.signed ? { partnerStatus: sessionPartnerStatusOf(req) } : undefined,
    );
    if (!refusal) return p;
    const code = isErrorCode(refusal.code) ? refusal.code : "FORBIDDEN";
    sendError(res, code, refusal.message, { scope: refusal.scope || undefined });
    return undefined;
  }

  /** One auth.Verify call, which also answers a missing or malformed key (sent as an empty key). */
  async function remoteAuthenticate(
    req: Request,
    res: Response,
    need: Need,
    key: ParsedKey | undefined,
    identified?: (p: Principal) => void,
  ): Promise<Principal | undefined> {
    const verdict = await clients.auth.verify({
      key: key?.full ?? "",
      sourceIp: sourceIpOf(req),
      scope: need.scope,
      permissionsAny: [...(need.permissions ?? [])],
      isWrite: need.write,
      module: need.module ? modules[need.module] : Module.UNSPECIFIED,
      ...(need.signed
        ? {
            resellerTimestamp: req.get("x-reseller-timestamp") ?? "",
            resellerSignature: req.get("x-reseller-signature") ?? "",
            rawBody: (req as RawBodyRequest).rawBody ?? new Uint8Array(),
          }
        : {}),
    });
    const rl = verdict.rateLimit;
    if (rl) setRateLimitHeaders(res, { ...rl, resetSeconds: Number(rl.reset?.seconds ?? 0n) });
    if (verdict.principal?.keyId) identified?.(verdict.principal);
    if (verdict.refusal) {
      checked.auth.refused.inc();
      await sendRefusal(req, res, key, verdict.refusal);
      return undefined;
    }
    checked.auth.accepted.inc();
    return verdict.principal;
  }

  return { authenticate, sessionCheck, earlyRefusal, sendRefusal };
}
