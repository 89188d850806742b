import { randomUUID } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Module, type Principal, type RateLimit } from "@hb/contracts/hb/auth/v1/auth_pb";
import type { CallerSchema } from "@hb/contracts/hb/platform/v1/caller_pb";
import {
  type ErrorCode,
  errorCodes,
  keyFromAuthorization,
  type Logger,
  type Redis,
  type Reservation,
  reserveCooldown,
  resolveError,
} from "@hb/platform";
import express, { type NextFunction, type Request, type Response } from "express";
import { jsonBody, type RawBodyRequest } from "./body.ts";
import type { Clients } from "./clients.ts";
import type { GatewayConfig } from "./config.ts";
import { sendError, sendOk } from "./envelope.ts";
import type { RequestLogPublisher } from "./request-log.ts";
import type { Context, KeyedAuth, RouteDef } from "./route.ts";
import { bodyObject, parseInput } from "./validation.ts";

export interface AppDeps {
  cfg: GatewayConfig;
  clients: Clients;
  redis: Redis;
  log: Logger;
  routes: RouteDef[];
  requestLog: RequestLogPublisher;
}

export const API_PREFIX = "/api/v1";

const sourceIpOf = (req: Request) => req.ip ?? req.socket.remoteAddress ?? "";

const modules = { inventory: Module.INVENTORY, vps: Module.VPS } as const;

function setRateLimitHeaders(res: Response, rl: RateLimit): void {
  // The window ends on a whole second (the clock hour), so the seconds are the Unix time.
  const reset = Number(rl.reset?.seconds ?? 0n);
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

/** A caller's X-Request-Id is kept when it is a short token (so it cannot inject into logs). */
export function requestIdOf(incoming: string | undefined): string {
  return incoming && /^[A-Za-z0-9._:-]{1,128}$/.test(incoming) ? incoming : `req_${randomUUID()}`;
}

/** Builds the gateway's Express app; main.ts only wires and listens. */
export function buildApp(deps: AppDeps): express.Express {
  const { cfg, clients, redis, log, routes, requestLog } = deps;
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.set("trust proxy", cfg.TRUSTED_PROXIES ? cfg.TRUSTED_PROXIES.split(",").map((s) => s.trim()) : false);
  app.set("query parser", "simple");

  // Every answer carries X-Request-Id: the caller's own when well-formed, else a new one.
  app.use((req, res, next) => {
    res.setHeader("X-Request-Id", requestIdOf(req.get("x-request-id")));
    next();
  });

  app.use(jsonBody(cfg.BODY_LIMIT));

  app.get("/healthz", (_req, res) => {
    res.json({ success: true, data: { status: "ok" } });
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
    if (err.type === "entity.too.large")
      return sendError(res, "PAYLOAD_TOO_LARGE", `Request body exceeds ${cfg.BODY_LIMIT}`);
    if (err.type === "encoding.unsupported" || err.type === "charset.unsupported") {
      return sendError(res, "UNSUPPORTED_MEDIA_TYPE", "Unsupported body encoding; send UTF-8 JSON");
    }
    if (err.type === undefined && resolveError(err).status < 500) return sendResolved(res, err, "body");
    if (err.status && err.status >= 400 && err.status < 500)
      return sendError(res, "BAD_REQUEST", "Malformed request");
    log.error("unhandled gateway error", { err });
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
    if (r.status >= 500)
      log.error("request failed", { route: where, requestId: res.getHeader("X-Request-Id"), err });
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
   * The key check: one auth.Verify call, which also answers a missing or malformed key (sent as
   * an empty key) from the Customer API switch. Sets the rate-limit headers. On a refusal the
   * answer is sent and undefined returned. `identified` gets the principal whenever the key was
   * identified, refused or not, so refused requests are logged too.
   */
  async function authenticate(
    req: Request,
    res: Response,
    need: Omit<KeyedAuth, "scope" | "write"> & { scope: KeyedAuth["scope"] | ""; write: boolean },
    identified?: (p: Principal) => void,
  ): Promise<Principal | undefined> {
    const key = keyFromAuthorization(req.headers.authorization);
    const verdict = await clients.auth.verify({
      key: key?.full ?? "",
      sourceIp: sourceIpOf(req),
      scope: need.scope,
      permissionsAny: need.permissions ?? [],
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
    if (verdict.rateLimit) setRateLimitHeaders(res, verdict.rateLimit);
    if (verdict.principal?.keyId) identified?.(verdict.principal);
    const refusal = verdict.refusal;
    if (refusal) {
      const code = isErrorCode(refusal.code) ? refusal.code : "UNAUTHORIZED";
      const message =
        !key && code === "UNAUTHORIZED"
          ? "Missing or malformed Authorization header; expected: Bearer <API key>"
          : refusal.message;
      sendError(res, code, message, {
        scope: refusal.scope,
        retryAfterSeconds: refusal.retryAfterSeconds || undefined,
      });
      return undefined;
    }
    return verdict.principal;
  }

  async function handle(def: RouteDef, req: Request, res: Response): Promise<void> {
    const track = trackRequest(req, res);
    let principal: Principal | undefined;
    let reservation: Reservation | undefined;
    try {
      if (typeof def.auth === "object") {
        const need = { ...def.auth, write: def.auth.write ?? def.method !== "get" };
        principal = await authenticate(req, res, need, (p) => {
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
