import { randomBytes, timingSafeEqual } from "node:crypto";
import { Realm, type Session } from "@hb/contracts/hb/auth/v1/portal_pb";
import { resolveError } from "@hb/platform";
import type { NextFunction, Request, Response } from "express";
import type { PageClients } from "../clients.ts";

/** One realm's pages: the client portal or the admin panel, each with its own cookies. */
export interface Area {
  realm: Realm;
  base: "/portal" | "/admin";
  name: string;
  sessionCookie: string;
  formCookie: string;
}

export const PORTAL: Area = {
  realm: Realm.PORTAL,
  base: "/portal",
  name: "Client portal",
  sessionCookie: "hb_portal_session",
  formCookie: "hb_portal_form",
};
export const ADMIN: Area = {
  realm: Realm.ADMIN,
  base: "/admin",
  name: "Admin panel",
  sessionCookie: "hb_admin_session",
  formCookie: "hb_admin_form",
};

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq < 1) continue;
    const name = part.slice(0, eq).trim();
    try {
      out[name] ??= decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      // A cookie we did not write; ignore it.
    }
  }
  return out;
}

/**
 * Secure everywhere but on a local address, where development runs over plain HTTP; HttpOnly;
 * SameSite=Strict; scoped to the area's path, so the portal's cookie never reaches /admin.
 */
export function cookieWriter(publicUrl: string) {
  const host = new URL(publicUrl).hostname;
  const local = host === "localhost" || host === "127.0.0.1" || host === "[::1]";
  const secure = new URL(publicUrl).protocol === "https:" || !local;
  return (res: Response, name: string, value: string, path: string, maxAgeSeconds?: number) => {
    const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${path}`, "HttpOnly", "SameSite=Strict"];
    if (secure) parts.push("Secure");
    if (maxAgeSeconds !== undefined) parts.push(`Max-Age=${maxAgeSeconds}`);
    res.append("Set-Cookie", parts.join("; "));
  };
}
export type CookieWriter = ReturnType<typeof cookieWriter>;

const sameToken = (a: string, b: string) =>
  a.length === b.length && a.length > 0 && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** The signed-in session of a page request (set by requireSession). */
export const sessionOf = (res: Response) => res.locals.session as Session;

/**
 * Pages behind sign-in: the session comes from auth (live permissions, every request); without one
 * a GET is sent to the sign-in page and a POST refused. Every POST must carry the session's CSRF
 * token. An Authorization header is ignored: API keys never open a page.
 */
export function requireSession(area: Area, clients: PageClients) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const token = parseCookies(req.headers.cookie)[area.sessionCookie] ?? "";
    let session: Session | undefined;
    try {
      session = token
        ? (await clients.portal.getSession({ realm: area.realm, sessionToken: token })).session
        : undefined;
    } catch (err) {
      if (resolveError(err).code !== "UNAUTHORIZED") return next(err);
    }
    if (!session) {
      if (req.method === "GET") {
        const back = encodeURIComponent(req.originalUrl);
        return res.redirect(303, `${area.base}/sign-in?next=${back}${token ? "&ended=1" : ""}`);
      }
      return res.status(401).type("text").send("Your session has ended; sign in again.");
    }
    if (req.method === "POST" && !sameToken(String(req.body?._csrf ?? ""), session.csrfToken)) {
      return res
        .status(403)
        .type("text")
        .send("This form has expired; go back, reload the page and send it again.");
    }
    res.locals.session = session;
    next();
  };
}

/** A token for forms shown before sign-in (double-submit: a cookie and the same value in the form). */
export function formToken(area: Area, req: Request, res: Response, setCookie: CookieWriter): string {
  const existing = parseCookies(req.headers.cookie)[area.formCookie];
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const t = randomBytes(32).toString("base64url");
  setCookie(res, area.formCookie, t, area.base);
  return t;
}

export const formTokenValid = (area: Area, req: Request) =>
  sameToken(String(req.body?._csrf ?? ""), parseCookies(req.headers.cookie)[area.formCookie] ?? "");
