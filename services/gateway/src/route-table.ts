/**
 * The API's route table as Express routers, one per first path segment (`/vps`, `/invoices`, …),
 * the request's first segment choosing which: Express tries a router's routes one after another,
 * and in one router for the whole table the invoice pay was the 80th of 94 routes, each tried
 * against the path on every pay. Every route's first segment is literal, so no request could match
 * routes of two segments, and the order within a segment is the table's. The routers are not
 * mounted on their segment, so a handler sees the same `req.path` as before (the idempotency
 * hash is taken over it).
 */
import express, { type Request, type RequestHandler, type Response, type Router } from "express";
import type { RouteDef } from "./route.ts";

/** `vps` of `/vps/123/reboot`; `` of `/`. */
export function firstSegment(path: string): string {
  const end = path.indexOf("/", 1);
  return end < 0 ? path.slice(1) : path.slice(1, end);
}

export function routeTable(routes: readonly RouteDef[], handle: RequestHandlerFor): RequestHandler {
  const bySegment = new Map<string, Router>();
  for (const def of routes) {
    const segment = firstSegment(def.path);
    if (segment.startsWith(":")) throw new Error(`route ${def.path}: its first segment must be literal`);
    let router = bySegment.get(segment);
    if (!router) {
      router = express.Router({ caseSensitive: true, strict: false });
      bySegment.set(segment, router);
    }
    router[def.method](def.path, (req, res) => handle(def, req, res));
  }
  return (req, res, next) => {
    const router = bySegment.get(firstSegment(req.path));
    if (router) router(req, res, next);
    else next();
  };
}

type RequestHandlerFor = (def: RouteDef, req: Request, res: Response) => unknown;
