import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { Module, type Principal, PrincipalSchema, type RateLimit } from "@hb/contracts/hb/auth/v1/auth_pb";
import type { CallerSchema } from "@hb/contracts/hb/platform/v1/caller_pb";
import {
  ALL_PERMISSIONS,
  beginContext,
  type ErrorCode,
  endContext,
  errorCodes,
  keyFromAuthorization,
  type Logger,
  type ParsedKey,
  type RequestContext,
  resolveError,
  runInContext,
  SpanKind,
} from "@hb/platform";
import { type Reservation, reserveCooldown } from "@hb/platform/cooldown";
import { decideKey } from "@hb/platform/key-decision";
import { countHourly } from "@hb/platform/rate-window";
import type { Redis } from "@hb/platform/redis";
import express, { type NextFunction, type Request, type Response } from "express";
import type { AuthThrottle } from "./auth-throttle.ts";
import { jsonBody, parserRefusal, type RawBodyRequest } from "./body.ts";
import type { Clients } from "./clients.ts";
import type { GatewayConfig } from "./config.ts";
import { sendError, sendOk } from "./envelope.ts";
import { inProcessApi, sessionPrincipalOf } from "./in-process.ts";
import { checkKey, type Refusal, unauthenticated } from "./key-check.ts";
import type { KeySync } from "./key-sync.ts";
import { keyChecks, observeHttp, UNMATCHED_ROUTE } from "./metrics.ts";
import { pagesRouter } from "./pages/index.ts";
import { paymentWebhookRouter } from "./payment-webhook.ts";
import type { RequestLogPublisher } from "./request-log.ts";
import { type Context, needOf, type RouteDef, type RouteNeed } from "./route.ts";
import { bodyObject, parseInput } from "./validation.ts";

export interface AppDeps {
  cfg: GatewayConfig;
  clients: Clients;
  redis: Redis;
  log: Logger;
  routes: RouteDef[];
  requestLog: RequestLogPublisher;
  /** Slows failed authentication per source address; absent: refusals go out at once. */
  authThrottle?: AuthThrottle;
  /** The key table auth streams; without it every keyed request asks auth.Verify. */
  keys?: KeySync;
  /** Dependencies the gateway is serving without right now (shown by /healthz). */
  degraded?: () => string[];
}

export const API_PREFIX = "/api/v1";

const sourceIpOf = (req: Request) => req.ip ?? req.socket.remoteAddress ?? "";

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

/**
 * A backend's message names each field first ("url must be ...", joined with "; " when there are
 * several): the wire name replaces each renamed one.
 */
function renameFields(message: string, names: Record<string, string>): string {
  return message
    .split("; ")
    .map((part) => {
      const field = part.slice(0, part.indexOf(" "));
      return names[field] ? `${names[field]}${part.slice(field.length)}` : part;
    })
    .join("; ");
}

/** The route template a request matched, for metrics and spans (set by the route's handler). */
const routeOf = (res: Response): string => (res.locals.route as string | undefined) ?? UNMATCHED_ROUTE;

/** Builds the gateway's Express app; main.ts only wires and listens. */
export function buildApp(deps: AppDeps): express.Express {
  const { cfg, clients, redis, log, routes, requestLog, keys } = deps;
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.set("trust proxy", cfg.TRUSTED_PROXIES ? cfg.TRUSTED_PROXIES.split(",").map((s) => s.trim()) : false);
  app.set("query parser", "simple");

  // Every answer carries X-Request-Id: the caller's own when well-formed, else a new one. The
  // rest of the request runs in its context (request id, trace), so logs and backend calls carry
  // it; the answer is counted and timed by route template once its last byte is sent.
  app.use((req, res, next) => {
    const started = performance.now();
    const ctx = beginContext(`${req.method} request`, SpanKind.SERVER, {
      requestId: req.get("x-request-id"),
      traceparent: req.get("traceparent"),
    });
    res.setHeader("X-Request-Id", ctx.requestId);
    res.locals.context = ctx;
    // "close" also comes when the client goes away before the answer is complete.
    res.once("close", () => {
      const ms = performance.now() - started;
      const route = routeOf(res);
      observeHttp(req.method, route, res.statusCode, ms / 1000);
      ctx.span?.updateName(`${req.method} ${route}`);
      ctx.span?.setAttribute("http.response.status_code", res.statusCode);
      endContext(ctx, res.statusCode >= 500 ? `status ${res.statusCode}` : undefined);
      runInContext(ctx, () =>
        log.debug("request handled", {
          method: req.method,
          route,
          status: res.statusCode,
          ms: Math.round(ms * 10) / 10,
        }),
      );
    });
    runInContext(ctx, next);
  });

  // A request that brings a body without a well-formed key is answered before a byte of the body
  // is read: the answer cannot depend on it (auth's refusal for an empty key, 401, or 403 while
  // the Customer API is off), and the connection is closed so the unread body goes nowhere.
  app.use(API_PREFIX, (req, res, next) => {
    const bringsBody =
      req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"]) > 0;
    if (!bringsBody || req.method === "GET" || req.method === "HEAD" || sessionPrincipalOf(req))
      return next();
    const key = keyFromAuthorization(req.headers.authorization);
    // A well-formed key is looked up in the key table first: an unknown, wrong or revoked one is
    // refused as early as a malformed one (the table answers without a round trip).
    const early = key ? keys && earlyRefusal(key) : undefined;
    if (early) {
      res.setHeader("Connection", "close");
      sendRefusal(req, res, key, early).catch((err: unknown) =>
        sendResolved(res, err, `${req.method} ${req.path}`),
      );
      return;
    }
    if (key) return next();
    res.setHeader("Connection", "close");
    authenticate(req, res, { scope: "", write: true }).then(
      (principal) => {
        if (principal) next(); // not reached: an empty key is always refused
      },
      (err: unknown) => sendResolved(res, err, `${req.method} ${req.path}`),
    );
  });

  // The payment provider's webhook reads its raw body itself (its signature is over the bytes).
  app.use(paymentWebhookRouter(clients.paymentEvents, log));

  // The portal and admin pages read their own (form) bodies; the API's JSON parser comes after.
  app.use(
    pagesRouter({
      clients: clients.pages,
      publicUrl: cfg.PUBLIC_URL,
      log,
      redis,
      ns: cfg.HB_NS,
      api: inProcessApi(() => app, API_PREFIX),
    }),
  );

  app.use(jsonBody(cfg.BODY_LIMIT));
  // The body parser continues from the socket's callbacks, outside the request's context.
  app.use((_req, res, next) => runInContext(res.locals.context as RequestContext, next));

  // Still 200 while degraded: the gateway answers every request (NATS only carries the request
  // log, which waits in its buffer; without its key table it answers keyed requests 503), so a
  // liveness probe must not restart it for a dependency's sake.
  app.get("/healthz", (_req, res) => {
    res.locals.route = "/healthz";
    const degraded = [...(deps.degraded?.() ?? []), ...(keys && !keys.serving() ? ["keys"] : [])];
    res.json({ success: true, data: degraded.length ? { status: "degraded", degraded } : { status: "ok" } });
  });

  // Readiness: a replica without a key table in step with auth refuses every keyed request, so a
  // balancer (and the stack's start-up) should send it nothing until it has one.
  app.get("/readyz", (_req, res) => {
    res.locals.route = "/readyz";
    if (keys && !keys.serving()) {
      return sendError(res, "SERVICE_UNAVAILABLE", "API keys cannot be checked yet (key table not in step)");
    }
    res.json({ success: true, data: { status: "ready" } });
  });

  const router = express.Router({ caseSensitive: true, strict: false });
  for (const def of routes) {
    router[def.method](def.path, (req, res) => handle(def, req, res));
  }
  app.use(API_PREFIX, router);

  // An unknown path under the prefix is still an API request: the key is checked and counted
  // (rate-limit headers and the request log included) before the 404.
  app.use(API_PREFIX, async (req, res) => {
    const track = trackRequest(req, res);
    try {
      if (sessionPrincipalOf(req))
        return sendError(res, "NOT_FOUND", `No route ${req.method} ${API_PREFIX}${req.path}`);
      const principal = await authenticate(req, res, { scope: "", write: false }, (p) => {
        track.principal = p;
      });
      if (!principal) return;
      sendError(res, "NOT_FOUND", `No route ${req.method} ${API_PREFIX}${req.path}`);
    } catch (err) {
      sendResolved(res, err, `${req.method} ${API_PREFIX} (unknown route)`);
    }
  });

  app.use((req, res) => {
    sendError(res, "NOT_FOUND", `No route ${req.method} ${req.path}`);
  });

  // Body parser failures (express.raw's, and body.ts's BAD_REQUEST refusals) and anything else
  // thrown outside a route handler.
  app.use((err: { type?: string; status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    const refusal = parserRefusal(err, cfg.BODY_LIMIT);
    if (refusal?.code === "UNSUPPORTED_MEDIA_TYPE") {
      return sendError(res, refusal.code, "Unsupported body encoding; send UTF-8 JSON");
    }
    if (refusal && refusal.code !== "BAD_REQUEST") return sendError(res, refusal.code, refusal.message);
    if (err.type === undefined && resolveError(err).status < 500) return sendResolved(res, err, "body");
    if (err.status && err.status >= 400 && err.status < 500)
      return sendError(res, "BAD_REQUEST", "Malformed request");
    // An error raised in the body parser's callbacks arrives outside the request's context.
    runInContext(res.locals.context as RequestContext, () => log.error("unhandled gateway error", { err }));
    sendError(res, "INTERNAL_ERROR", "Internal error. The failure was logged; please try again later.");
  });

  /** `fieldNames` renames a backend's fields (proto names) to the route's wire names. */
  function sendResolved(
    res: Response,
    err: unknown,
    where: string,
    fieldNames: Record<string, string> = {},
  ): void {
    const r = resolveError(err);
    if (r.status >= 500) log.error("request failed", { route: where, err });
    const wireName = (field: string) => fieldNames[field] ?? field;
    sendError(res, r.code, renameFields(r.message, fieldNames), {
      details: r.info?.violations.map((v) => ({
        field: wireName(v.field),
        message: renameFields(v.message, fieldNames),
      })),
      scope: r.info?.scope,
      retryAfterSeconds: r.info?.retryAfterSeconds || undefined,
    });
  }

  /** Publishes the request's log entry once the answer is sent, if a key was identified. */
  function trackRequest(req: Request, res: Response): { principal?: Principal } {
    const started = performance.now();
    const track: { principal?: Principal } = {};
    res.on("finish", () => {
      const principal = track.principal;
      if (principal?.keyId) {
        requestLog.publish({
          keyId: principal.keyId,
          customerId: principal.customerId,
          method: req.method,
          endpoint: API_PREFIX + req.path,
          status: res.statusCode,
          ip: sourceIpOf(req),
          at: new Date().toISOString(),
          durationMs: performance.now() - started,
        });
      }
    });
    return track;
  }

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

  const unavailable: Refusal = {
    code: "SERVICE_UNAVAILABLE",
    message: "API keys cannot be checked for a moment; please try again",
  };

  /** What the key table alone can refuse, before a body is read: undefined if it cannot. */
  function earlyRefusal(key: ParsedKey): Refusal | undefined {
    if (!keys) return undefined;
    if (!keys.serving() || !keys.table.settings) return unavailable;
    const entry = keys.table.entry(key.prefix);
    if (!entry || entry.revoked || keys.table.matches(entry.keyId, key.full) === false) {
      return unauthenticated(keys.table.settings);
    }
    return undefined;
  }

  /** A route's need; an unmatched path or a body without a key checks the key only (scope ""). */
  type Need = Omit<RouteNeed, "scope" | "permissions" | "signed"> &
    Partial<Pick<RouteNeed, "permissions" | "signed">> & { scope: RouteNeed["scope"] | "" };

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
    if (!keys || need.signed) return remoteAuthenticate(req, res, need, key, identified);
    const settings = keys.table.settings;
    if (!keys.serving() || !settings) {
      await sendRefusal(req, res, key, unavailable);
      return undefined;
    }
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
   * The check of a portal session's in-process call (in-process.ts): the key check's own decision
   * (decideKey, which auth.Verify and the key table ask too), with the session standing in for a key
   * that holds the route's scope, no IP allowlist and an empty hourly window, and with the Customer
   * API switch on: the switch and the hourly limit belong to the API's keys, not to the portal.
   * Module switches, the person's live permissions (auth re-reads them for the session on every
   * page) and suspension are decided as for a key, with the same codes and words.
   */
  async function sessionCheck(res: Response, need: Need, p: Principal): Promise<Principal | undefined> {
    const s =
      keys?.serving() && keys.table.settings
        ? keys.table.settings
        : (await clients.pages.auth.getSettings({})).settings;
    const nowMs = Date.now();
    const refusal = decideKey(
      {
        customerApiEnabled: true,
        inventoryModule: s?.inventoryModule ?? false,
        vpsModule: s?.vpsModule ?? false,
        revoked: false,
        expired: false,
        ipAllowlist: [],
        sourceIp: "",
        scopes: need.scope ? [need.scope] : [],
        permissions: p.permissions,
        accountSuspended: p.accountStatus === CustomerStatus.SUSPENDED,
        window: { count: 0, limit: 1, reset: 0 },
        nowMs,
      },
      { scope: need.scope, permissionsAny: need.permissions ?? [], write: need.write, module: need.module },
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

  async function handle(def: RouteDef, req: Request, res: Response): Promise<void> {
    res.locals.route = API_PREFIX + def.path;
    const track = trackRequest(req, res);
    let principal: Principal | undefined;
    let reservation: Reservation | undefined;
    try {
      const session = sessionPrincipalOf(req);
      if (session && def.auth !== "none" && def.auth.signed) {
        // Signed (reseller) routes take a partner's signature, which a portal session never is.
        return sendError(res, "UNAUTHORIZED", "This operation takes a signed API request");
      }
      if (def.auth !== "none") {
        const need = needOf({ method: def.method, auth: def.auth });
        principal = session
          ? await sessionCheck(res, need, session)
          : await authenticate(req, res, need, (p) => {
              track.principal = p;
            });
        if (!principal) return;
      }

      const ctx: Context<unknown, unknown, unknown> = {
        params: def.params ? parseInput(def.params, req.params, "path") : req.params,
        query: def.query ? parseInput(def.query, req.query ?? {}, "query") : {},
        body: def.body ? parseInput(def.body, bodyObject(req.body), "body") : undefined,
        principal: principal as Principal,
        caller: callerOf(principal),
        clients,
        sourceIp: sourceIpOf(req),
        req,
        res,
      };

      if (def.cooldown && principal) {
        reservation = await reserveCooldown(
          redis,
          cfg.HB_NS,
          def.cooldown.rule,
          principal.personId,
          def.cooldown.resource(ctx),
        );
        if (!reservation.ok) {
          return sendError(
            res,
            "ACTION_RATE_LIMITED",
            "Too many requests for this action; wait before retrying",
            {
              retryAfterSeconds: reservation.retryAfterSeconds,
            },
          );
        }
      }

      let reply: Awaited<ReturnType<RouteDef["handler"]>>;
      try {
        reply = await def.handler(ctx);
      } catch (err) {
        // Only accepted calls consume a cool-down: a refused call gives its reservation back.
        if (reservation?.ok) await reservation.release();
        throw err;
      }
      if (!reply) return; // the handler wrote the response itself (documentation routes)
      sendOk(res, reply.status ?? def.successStatus ?? 200, reply.data, reply.extra);
    } catch (err) {
      sendResolved(res, err, `${def.method.toUpperCase()} ${def.path}`, def.fieldNames);
    }
  }

  return app;
}

function callerOf(p: Principal | undefined): MessageInitShape<typeof CallerSchema> {
  if (!p) return {};
  return {
    customerId: p.customerId,
    personId: p.personId,
    keyId: p.keyId,
    permissions: p.permissions,
    isOwner: p.isOwner,
    currency: p.currency,
  };
}
