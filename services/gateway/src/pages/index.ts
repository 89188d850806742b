import { readFileSync } from "node:fs";
import path from "node:path";
import type { Logger } from "@hb/platform";
import type { Redis } from "@hb/platform/redis";
import express, { type NextFunction, type Request, type Response, type Router } from "express";
import type { PageClients } from "../clients.ts";
import type { ApiCall } from "../in-process.ts";
import { adminRouter } from "./admin.ts";
import { onceStore } from "./customer/once.ts";
import { html } from "./html.ts";
import { FAVICON, page, SCRIPT, STYLESHEET } from "./layout.ts";
import { portalRouter } from "./portal.ts";
import { sendPage } from "./respond.ts";
import { cookieWriter } from "./session.ts";

const asset = (name: string) => readFileSync(path.join(import.meta.dirname, name));

/**
 * The client portal (/portal) and the admin panel (/admin): server-rendered pages over auth's,
 * billing's and webhooks' gRPC APIs, with forms that work without JavaScript. Mounted by app.ts
 * before the API's JSON body parser: forms are read as urlencoded here.
 */
export function pagesRouter(deps: {
  clients: PageClients;
  publicUrl: string;
  log: Logger;
  redis: Redis;
  /** Redis key namespace. */
  ns: string;
  /** The customer API in process (in-process.ts): the portal's customer pages act through it. */
  api: ApiCall;
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
  const forms = express.urlencoded({ extended: false, limit: "64kb", parameterLimit: 200 });
  router.use(
    "/portal",
    forms,
    portalRouter(deps.clients, setCookie, deps.publicUrl, {
      call: deps.api,
      once: onceStore(deps.redis, deps.ns),
    }),
  );
  router.use("/admin", forms, adminRouter(deps.clients, setCookie, deps.publicUrl));
  router.use(["/portal", "/admin"], (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    deps.log.error("page failed", { path: req.path, err });
    sendPage(
      res,
      page({
        title: "Something went wrong",
        area: req.baseUrl.startsWith("/admin") ? "Admin panel" : "Client portal",
        body: html`<p>The page could not be shown. The failure was logged; please try again in a moment.</p>`,
      }),
      500,
    );
  });
  return router;
}
