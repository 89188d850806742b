import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Principal, RateLimit } from "@hb/contracts/auth/v1/auth_pb";
import type { CallerSchema } from "@hb/contracts/platform/v1/error_pb";
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
import type { Clients } from "./clients.ts";
import type { GatewayConfig } from "./config.ts";
import { sendError, sendOk } from "./envelope.ts";
import type { RequestLogPublisher } from "./request-log.ts";
import type { Context, RouteDef } from "./route.ts";
import { parseInput } from "./validation.ts";

export interface AppDeps {
  cfg: GatewayConfig;
  clients: Clients;
  redis: Redis;
  log: Logger;
  routes: RouteDef[];
  requestLog: RequestLogPublisher;
}

export const API_PREFIX = "/api/v1";

type RawBodyRequest = Request & { rawBody?: Buffer };

function setRateLimitHeaders(res: Response, rl: RateLimit): void {
  const secondsLeft = Math.max(0, Number(rl.reset) - Math.floor(Date.now() / 1000));
  res.setHeader("X-RateLimit-Limit", String(rl.limit));
  res.setHeader("X-RateLimit-Remaining", String(rl.remaining));
  res.setHeader("X-RateLimit-Reset", String(rl.reset));
  // IETF draft-ietf-httpapi-ratelimit-headers fields beside the classic ones.
  res.setHeader("RateLimit-Policy", `"hourly";q=${rl.limit};w=3600`);
  res.setHeader("RateLimit", `"hourly";r=${rl.remaining};t=${secondsLeft}`);
}

const isErrorCode = (c: string): c is ErrorCode => c in errorCodes;

/** Builds the gateway's Express app; main.ts only wires and listens. */
export function buildApp(deps: AppDeps): express.Express {
  const { cfg, clients, redis, log, routes, requestLog } = deps;
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.set("trust proxy", cfg.TRUSTED_PROXIES ? cfg.TRUSTED_PROXIES.split(",").map((s) => s.trim()) : false);
  app.set("query parser", "simple");

  // Any body is read as JSON whatever its content type, so `curl -d '{...}'` works as written.
  // The raw bytes are kept for reseller request signatures, which cover the exact body.
  app.use(
    express.json({
      limit: cfg.BODY_LIMIT,
      type: () => true,
      strict: false,
      verify: (req, _res, buf) => {
        (req as RawBodyRequest).rawBody = buf;
      },
    }),
  );

  app.get("/healthz", (_req, res) => {
    res.json({ success: true, data: { status: "ok" } });
  });

  const router = express.Router({ caseSensitive: true, strict: false });
  for (const def of routes) {
    router[def.method](def.path, (req, res) => handle(def, req, res));
  }
  app.use(API_PREFIX, router);

  app.use((req, res) => {
    sendError(res, "NOT_FOUND", `No route ${req.method} ${req.path}`);
  });

  // Body parser failures and anything else thrown outside a route handler.
  app.use((err: { type?: string; status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    if (err.type === "entity.too.large")
      return sendError(res, "PAYLOAD_TOO_LARGE", `Request body exceeds ${cfg.BODY_LIMIT}`);
    if (err.type === "entity.parse.failed")
      return sendError(res, "BAD_REQUEST", "Request body is not valid JSON");
    if (err.type === "encoding.unsupported" || err.type === "charset.unsupported") {
      return sendError(res, "UNSUPPORTED_MEDIA_TYPE", "Unsupported body encoding; send UTF-8 JSON");
    }
    if (err.status && err.status >= 400 && err.status < 500)
      return sendError(res, "BAD_REQUEST", "Malformed request");
    log.error("unhandled gateway error", { err });
    sendError(res, "INTERNAL_ERROR", "Internal error. The failure was logged; please try again later.");
  });

  async function handle(def: RouteDef, req: Request, res: Response): Promise<void> {
    const started = performance.now();
    const sourceIp = req.ip ?? req.socket.remoteAddress ?? "";
    let principal: Principal | undefined;
    res.on("finish", () => {
      if (principal?.keyId) {
        requestLog.publish({
          keyId: principal.keyId,
          customerId: principal.customerId,
          method: req.method,
          endpoint: API_PREFIX + req.path,
          status: res.statusCode,
          ip: sourceIp,
          at: new Date().toISOString(),
          durationMs: performance.now() - started,
        });
      }
    });

    let reservation: Reservation | undefined;
    try {
      if (typeof def.auth === "object") {
        const key = keyFromAuthorization(req.headers.authorization);
        if (!key) {
          return sendError(
            res,
            "UNAUTHORIZED",
            "Missing or malformed Authorization header; expected: Bearer <API key>",
          );
        }
        const verdict = await clients.auth.verify({
          key: key.full,
          sourceIp,
          scope: def.auth.scope,
          permissionsAny: def.auth.permissions ?? [],
          isWrite: def.auth.write ?? def.method !== "get",
          module: def.auth.module ?? "",
          ...(def.auth.signed
            ? {
                resellerTimestamp: req.get("x-reseller-timestamp") ?? "",
                resellerSignature: req.get("x-reseller-signature") ?? "",
                rawBody: (req as RawBodyRequest).rawBody ?? new Uint8Array(),
              }
            : {}),
        });
        if (verdict.rateLimit) setRateLimitHeaders(res, verdict.rateLimit);
        principal = verdict.principal;
        const refusal = verdict.refusal;
        if (refusal) {
          const code = isErrorCode(refusal.code) ? refusal.code : "UNAUTHORIZED";
          return sendError(res, code, refusal.message, {
            scope: refusal.scope,
            retryAfterSeconds: refusal.retryAfterSeconds || undefined,
          });
        }
      }

      const ctx: Context<unknown, unknown, unknown> = {
        params: def.params ? parseInput(def.params, req.params, "path") : req.params,
        query: def.query ? parseInput(def.query, req.query ?? {}, "query") : {},
        body: def.body ? parseInput(def.body, req.body ?? {}, "body") : undefined,
        principal: principal as Principal,
        caller: callerOf(principal),
        clients,
        sourceIp,
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
      const r = resolveError(err);
      if (r.status >= 500)
        log.error("request failed", { route: `${def.method.toUpperCase()} ${def.path}`, err });
      sendError(res, r.code, r.message, {
        details: r.info?.violations.map((v) => ({ field: v.field, message: v.message })),
        scope: r.info?.scope,
        retryAfterSeconds: r.info?.retryAfterSeconds || undefined,
      });
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
  };
}
