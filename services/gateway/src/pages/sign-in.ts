import { timestampDate } from "@bufbuild/protobuf/wkt";
import { resolveError } from "@hb/platform";
import type { Router } from "express";
import type { PageClients } from "../clients.ts";
import { emptyForm, type FormState, field, formErrors, generalError } from "./forms.ts";
import { html } from "./html.ts";
import { page } from "./layout.ts";
import { sendPage } from "./respond.ts";
import { type Area, type CookieWriter, formToken, formTokenValid, parseCookies } from "./session.ts";

/** Only a path of the same area is followed after sign-in (never another site). */
function nextPath(area: Area, raw: unknown): string {
  const p = typeof raw === "string" ? raw : "";
  return p.startsWith(`${area.base}/`) && !p.startsWith("//") && !p.includes("\\") ? p : `${area.base}/`;
}

/** Sign-in, sign-out and set-password pages of one area. */
export function signInRoutes(router: Router, area: Area, clients: PageClients, setCookie: CookieWriter) {
  const signInPage = (token: string, f: FormState, next: string, notice?: string) =>
    page({
      title: "Sign in",
      area: area.name,
      notice,
      body: html`<form method="post" action="${area.base}/sign-in" class="narrow" novalidate>
  <input type="hidden" name="_csrf" value="${token}">
  <input type="hidden" name="next" value="${next}">
  ${generalError(f)}
  ${field(f, "email", "E-mail address", { type: "email", required: true, autocomplete: "username" })}
  ${field(f, "password", "Password", { type: "password", required: true, autocomplete: "current-password" })}
  <button type="submit">Sign in</button>
</form>`,
    });

  router.get("/sign-in", (req, res) => {
    sendPage(
      res,
      signInPage(
        formToken(area, req, res, setCookie),
        emptyForm(),
        nextPath(area, req.query.next),
        // Why the sign-in page is shown: after Sign out, or a session that ended (expired, or
        // ended elsewhere) when a page was asked for.
        req.query.signed_out
          ? "You are signed out."
          : req.query.ended
            ? "Your session has ended; sign in again."
            : undefined,
      ),
    );
  });

  router.post("/sign-in", async (req, res, next) => {
    const values = { email: String(req.body.email ?? ""), password: "" };
    const back = nextPath(area, req.body.next);
    const token = formToken(area, req, res, setCookie);
    if (!formTokenValid(area, req)) {
      return sendPage(
        res,
        signInPage(token, { values, errors: {}, general: "The form expired; please sign in again." }, back),
        403,
      );
    }
    try {
      const r = await clients.portal.signIn({
        realm: area.realm,
        email: values.email,
        password: String(req.body.password ?? ""),
        sourceIp: req.ip ?? "",
      });
      const expires = r.session?.expiresAt ? timestampDate(r.session.expiresAt) : new Date();
      setCookie(
        res,
        area.sessionCookie,
        r.sessionToken,
        area.base,
        Math.max(60, Math.floor((expires.getTime() - Date.now()) / 1000)),
      );
      res.redirect(303, back);
    } catch (err) {
      const r = resolveError(err);
      if (r.status >= 500) return next(err);
      const general =
        r.code === "RATE_LIMITED"
          ? `${r.message} (in ${Math.ceil((r.info?.retryAfterSeconds ?? 60) / 60)} min).`
          : r.code === "BAD_REQUEST"
            ? "Enter your e-mail address and password."
            : r.message;
      if (r.info?.retryAfterSeconds) res.setHeader("Retry-After", String(r.info.retryAfterSeconds));
      sendPage(res, signInPage(token, { values, errors: {}, general }, back), r.status);
    }
  });

  router.post("/sign-out", async (req, res) => {
    const token = parseCookies(req.headers.cookie)[area.sessionCookie];
    // Signing out needs no CSRF check to be safe: the worst a forged one does is sign you out.
    if (token) await clients.portal.signOut({ sessionToken: token }).catch(() => undefined);
    setCookie(res, area.sessionCookie, "", area.base, 0);
    res.redirect(303, `${area.base}/sign-in?signed_out=1`);
  });

  const setPasswordPage = (csrf: string, linkToken: string, f: FormState) =>
    page({
      title: "Choose your password",
      area: area.name,
      body: html`<form method="post" action="${area.base}/set-password" class="narrow" novalidate>
  <input type="hidden" name="_csrf" value="${csrf}">
  <input type="hidden" name="token" value="${linkToken}">
  ${generalError(f)}
  ${field(f, "password", "New password", {
    type: "password",
    required: true,
    autocomplete: "new-password",
    hint: "At least 12 characters. This link works once.",
  })}
  <button type="submit">Set password</button>
</form>`,
    });

  router.get("/set-password", (req, res) => {
    const csrf = formToken(area, req, res, setCookie);
    sendPage(res, setPasswordPage(csrf, String(req.query.token ?? ""), emptyForm()));
  });

  router.post("/set-password", async (req, res, next) => {
    const csrf = formToken(area, req, res, setCookie);
    const linkToken = String(req.body.token ?? "");
    if (!formTokenValid(area, req)) {
      return sendPage(
        res,
        setPasswordPage(csrf, linkToken, {
          values: {},
          errors: {},
          general: "The form expired; please try again.",
        }),
        403,
      );
    }
    try {
      const r = await clients.portal.setPassword({
        token: linkToken,
        password: String(req.body.password ?? ""),
      });
      sendPage(
        res,
        page({
          title: "Password set",
          area: area.name,
          body: html`<p>Your password is set. Sign in with <strong>${r.email}</strong>.</p>
<p><a href="${area.base}/sign-in">Sign in</a></p>`,
        }),
      );
    } catch (err) {
      try {
        const f = formErrors(err, {});
        if (f.errors.token) f.general = f.errors.token;
        sendPage(res, setPasswordPage(csrf, linkToken, f), resolveError(err).status);
      } catch (e) {
        next(e);
      }
    }
  });
}
