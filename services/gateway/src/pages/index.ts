import { readFileSync } from "node:fs";
import path from "node:path";
import type { Logger } from "@hb/platform";
import express, { type NextFunction, type Request, type Response, type Router } from "express";
import type { PageClients } from "../clients.ts";
import { adminRouter } from "./admin.ts";
import { html } from "./html.ts";
import { page, SCRIPT, STYLESHEET } from "./layout.ts";
import { portalRouter } from "./portal.ts";
import { sendPage } from "./respond.ts";
import { cookieWriter } from "./session.ts";

const asset = (name: string) => readFileSync(path.join(import.meta.dirname, name));

/**
 * The client portal (/portal) and the admin panel (/admin): server-rendered pages over auth's,
 * billing's and webhooks' gRPC APIs, with forms that work without JavaScript. Mounted by app.ts
 * before the API's JSON body parser: forms are read as urlencoded here.
 */
export function pagesRouter(deps: { clients: PageClients; publicUrl: string; log: Logger }): Router {
  const router = express.Router();
  const setCookie = cookieWriter(deps.publicUrl);
  const css = asset("pages.css");
  const js = asset("pages.js");
  router.get(STYLESHEET, (_req, res) => {
    res.type("text/css").set("Cache-Control", "public, max-age=300").send(css);
  });
  router.get(SCRIPT, (_req, res) => {
    res.type("text/javascript").set("Cache-Control", "public, max-age=300").send(js);
  });
  const forms = express.urlencoded({ extended: false, limit: "64kb", parameterLimit: 200 });
  router.use("/portal", forms, portalRouter(deps.clients, setCookie, deps.publicUrl));
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
