import { readFileSync } from "node:fs";
import path from "node:path";
import { errorCodes, type Logger, resolveError } from "@hb/platform";
import { reserveCooldown } from "@hb/platform/cooldown";
import type { Redis } from "@hb/platform/redis";
import express, { type NextFunction, type Request, type Response, type Router } from "express";
import { parserRefusal } from "../body.ts";
import type { PageClients } from "../clients.ts";
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from "../envelope.ts";
import type { ApiCall } from "../in-process.ts";
import { refuseUnsafeText } from "../validation.ts";
import { adminRouter } from "./admin.ts";
import { consoleAssets } from "./console-assets.ts";
import { onceStore } from "./customer/once.ts";
import { html } from "./html.ts";
import { FAVICON, page, SCRIPT, STYLESHEET } from "./layout.ts";
import { portalRouter } from "./portal.ts";
import { sendPage } from "./respond.ts";
import { cookieWriter } from "./session.ts";
import { OutcomeUnknown } from "./staff-audit.ts";

const asset = (name: string) => readFileSync(path.join(import.meta.dirname, name));

/** The largest form a page takes; the API's BODY_LIMIT is for JSON bodies. */
const FORM_LIMIT = "64kb";

/**
 * Text PostgreSQL cannot store (a NUL character, a lone surrogate) in any form field or query
 * value is refused 400 before a page reads it, as the API refuses it (validation.ts).
 */
function safeText(req: Request, _res: Response, next: NextFunction) {
  try {
    refuseUnsafeText(req.query, "query");
    refuseUnsafeText(req.body ?? {}, "body");
    next();
  } catch (err) {
    next(err);
  }
}

/**
 * The client portal (/portal) and the admin panel (/admin): server-rendered pages over auth's,
 * billing's and webhooks' gRPC APIs, with forms that work without JavaScript. Mounted by app.ts
 * before the API's JSON body parser: forms are read as urlencoded here.
 */
export function pagesRouter(deps: {
  /** The admin panel's clients (identity admin-panel). */
  clients: PageClients;
  /** The client portal's clients (identity portal): a customer page never calls as staff. */
  portalClients: PageClients;
  publicUrl: string;
  log: Logger;
  redis: Redis;
  /** Redis key namespace. */
  ns: string;
  /** The customer API in process (in-process.ts): the portal's customer pages act through it. */
  api: ApiCall;
  /**
   * How often a page's connection held open (the reseller panel's live events) checks its
   * session, as a portal console does (CONSOLE_SESSION_CHECK_MS).
   */
  sessionCheckMs: number;
}): Router {
  const router = express.Router();
  const setCookie = cookieWriter(deps.publicUrl);
  const css = asset("pages.css");
  const js = asset("pages.js");
  const icon = asset("favicon.svg");
  router.get([FAVICON, "/favicon.ico"], (_req, res) => {
    res.type("image/svg+xml").set("Cache-Control", "public, max-age=86400").send(icon);
  });
  router.get(STYLESHEET, (_req, res) => {
    res.type("text/css").set("Cache-Control", "public, max-age=300").send(css);
  });
  router.get(SCRIPT, (_req, res) => {
    res.type("text/javascript").set("Cache-Control", "public, max-age=300").send(js);
  });
  // The console page's terminal: xterm.js from its installed package (no CDN) and the page's script.
  for (const a of consoleAssets()) {
    router.get(a.path, (_req, res) => {
      res.type(a.type).set("Cache-Control", "public, max-age=300").send(a.body);
    });
  }
  const forms = express.urlencoded({ extended: false, limit: FORM_LIMIT, parameterLimit: 200 });
  const once = onceStore(deps.redis, deps.ns);
  router.use(
    "/portal",
    forms,
    safeText,
    portalRouter(
      deps.portalClients,
      setCookie,
      deps.publicUrl,
      {
        call: deps.api,
        once,
        cooldown: (rule, personId, resource) =>
          reserveCooldown(deps.redis, deps.ns, rule, personId, resource),
      },
      deps.sessionCheckMs,
    ),
  );
  router.use("/admin", forms, safeText, adminRouter(deps.clients, setCookie, deps.publicUrl, once, deps.log));
  // What the API answers 400, 413, 415 or 503 a page answers alike, as a page; only a failure of
  // the gateway itself is a 500 (and logged).
  router.use(["/portal", "/admin"], (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const area = req.baseUrl.startsWith("/admin") ? "Admin panel" : "Client portal";
    const parser = parserRefusal(err as { type?: string; status?: number }, FORM_LIMIT);
    // A staff write whose answer was lost (staff-audit.ts): not a failure of the gateway, and not
    // known to have failed either; the page says so, and the audit log shows the outcome later.
    if (err instanceof OutcomeUnknown) {
      deps.log.warn("page write outcome unknown", { path: req.path, auditId: err.auditId });
      return sendPage(
        res,
        page({ title: "Outcome not known yet", area, body: html`<p role="alert">${err.message}</p>` }),
        503,
      );
    }
    const r = parser ? { status: errorCodes[parser.code].http, message: parser.message } : resolveError(err);
    if (r.status === 500) {
      deps.log.error("page failed", { path: req.path, err });
      return sendPage(
        res,
        page({
          title: "Something went wrong",
          area,
          body: html`<p>The page could not be shown. The failure was logged; please try again in a moment.</p>`,
        }),
        500,
      );
    }
    if (r.status >= 500) deps.log.warn("page refused: a dependency is unavailable", { path: req.path, err });
    if (r.status === 503) res.setHeader("Retry-After", String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    const title =
      r.status === 413 ? "The form is too large" : r.status >= 500 ? "Try again in a moment" : "Not accepted";
    sendPage(res, page({ title, area, body: html`<p role="alert">${r.message}</p>` }), r.status);
  });
  return router;
}
