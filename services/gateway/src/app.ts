import {
  beginContext,
  endContext,
  keyFromAuthorization,
  type Logger,
  type RequestContext,
  resolveError,
  runInContext,
  SpanKind,
} from "@hb/platform";
import type { Redis } from "@hb/platform/redis";
import express, { type NextFunction, type Request, type Response } from "express";
import type { AuthThrottle } from "./auth-throttle.ts";
import { jsonBody, parserRefusal } from "./body.ts";
import type { Clients } from "./clients.ts";
import type { GatewayConfig } from "./config.ts";
import { sendError } from "./envelope.ts";
import { inProcessApi, sessionPrincipalOf } from "./in-process.ts";
import type { KeySync } from "./key-sync.ts";
import { observeHttp, UNMATCHED_ROUTE } from "./metrics.ts";
import { pagesRouter } from "./pages/index.ts";
import { paymentWebhookRouter } from "./payment-webhook.ts";
import { createRequestAuth } from "./request-auth.ts";
import { type RequestLogPublisher, trackRequest } from "./request-log.ts";
import { API_PREFIX, type RouteDef } from "./route.ts";
import { createRouteHandler } from "./route-handler.ts";
import { routeTable } from "./route-table.ts";
import { sendResolved as sendResolvedWith } from "./send-resolved.ts";

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

const isApiPath = (path: string) => path === API_PREFIX || path.startsWith(`${API_PREFIX}/`);

/** The route template a request matched, for metrics and spans (set by the route's handler). */
const routeOf = (res: Response): string => (res.locals.route as string | undefined) ?? UNMATCHED_ROUTE;

/**
 * Builds the gateway's Express app, in the order a request meets it: its context and metrics, the
 * early refusal of a body without a good key, the payment webhook and the pages, the JSON body,
 * health, the route table (route-handler.ts, request-auth.ts), unknown paths and errors. main.ts
 * only wires and listens.
 */
export function buildApp(deps: AppDeps): express.Express {
  const { cfg, clients, redis, log, routes, requestLog, keys } = deps;
  const auth = createRequestAuth({ cfg, clients, redis, keys, authThrottle: deps.authThrottle });
  const { authenticate, earlyRefusal, sendRefusal } = auth;
  const handle = createRouteHandler({ cfg, clients, redis, log, auth, requestLog });
  const sendResolved = (res: Response, err: unknown, where: string) => sendResolvedWith(log, res, err, where);
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
  // An API request never matches a page: it skips the pages' layers.
  const pages = pagesRouter({
    clients: clients.pages,
    portalClients: clients.portalPages,
    publicUrl: cfg.PUBLIC_URL,
    log,
    redis,
    ns: cfg.HB_NS,
    api: inProcessApi(() => app, API_PREFIX),
    sessionCheckMs: cfg.CONSOLE_SESSION_CHECK_MS,
  });
  app.use((req, res, next) => (isApiPath(req.path) ? next() : pages(req, res, next)));

  app.use(jsonBody(cfg.BODY_LIMIT));
  // The body parser continues from the socket's callbacks, outside the request's context.
  app.use((_req, res, next) => runInContext(res.locals.context as RequestContext, next));

  // Still 200 while degraded: the gateway answers every request (NATS only carries the request
  // log, which waits in its buffer; without its key table auth checks each key), so a
  // liveness probe must not restart it for a dependency's sake.
  app.get("/healthz", (_req, res) => {
    res.locals.route = "/healthz";
    const degraded = [...(deps.degraded?.() ?? []), ...(keys && !keys.serving() ? ["keys"] : [])];
    res.json({ success: true, data: degraded.length ? { status: "degraded", degraded } : { status: "ok" } });
  });

  // Readiness: a replica without a key table in step with auth asks auth about every key, so a
  // balancer (and the stack's start-up) should prefer replicas that have one.
  app.get("/readyz", (_req, res) => {
    res.locals.route = "/readyz";
    if (keys && !keys.serving()) {
      return sendError(res, "SERVICE_UNAVAILABLE", "API keys cannot be checked yet (key table not in step)");
    }
    res.json({ success: true, data: { status: "ready" } });
  });

  app.use(
    API_PREFIX,
    routeTable(routes, (def, req, res) => handle(def, req, res)),
  );

  // An unknown path under the prefix is still an API request: the key is checked and counted
  // (rate-limit headers and the request log included) before the 404.
  app.use(API_PREFIX, async (req, res) => {
    const track = trackRequest(requestLog, req, res);
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

  return app;
}
