import type { CooldownRule, Reservation } from "@hb/platform/cooldown";
import type { NextFunction, Request, Response, Router } from "express";
import type { ApiCall } from "../../in-process.ts";
import type { Html } from "../html.ts";
import { html } from "../html.ts";
import type { PageAssets } from "../layout.ts";
import { sessionOf } from "../session.ts";
import { type PageApi, pageApi, Refused } from "./api.ts";
import type { OnceStore, Outcome } from "./once.ts";
import { validToken } from "./once.ts";
import type { PageAction } from "./page-table.ts";

export interface RenderOptions {
  status?: number;
  notice?: string;
  error?: string;
  /** The page's own scripts and styles (the console's terminal); its CSP then allows inline styles. */
  assets?: PageAssets;
}

/** What the customer pages are built with. */
export interface Kit {
  call: ApiCall;
  once: OnceStore;
  /** Reserves one use of a cool-down for the person (the API's mechanism, for actions without a route). */
  cooldown: (rule: CooldownRule, personId: string, resource: string) => Promise<Reservation>;
  render: (res: Response, title: string, body: Html, o?: RenderOptions) => void;
}

/** The notice or error an action left for this page (`?done=<token>`), as render options. */
export async function doneOf(kit: Kit, req: Request, res: Response): Promise<RenderOptions> {
  const o = await kit.once.outcome(sessionOf(res).subjectId, req.query.done);
  return o ? { notice: o.notice, error: o.error } : {};
}

/** A refusal shown as its own page: not found, not allowed, or the API's message. */
export function refusalPage(kit: Kit, res: Response, err: Refused): void {
  const title =
    err.status === 404 ? "Not found" : err.status === 403 ? "Not available" : "The request was refused";
  kit.render(
    res,
    title,
    html`<p role="alert" class="error">${err.message}</p><p><a href="/portal/services">Back to your services</a></p>`,
    {
      status: err.status,
    },
  );
}

/** A page (GET): refusals of the API become pages of their own, anything else the error page. */
export function page(
  kit: Kit,
  router: Router,
  path: string,
  show: (req: Request, res: Response, api: PageApi) => Promise<void>,
): void {
  router.get(path, async (req: Request, res: Response, next: NextFunction) => {
    try {
      await show(req, res, pageApi(kit.call, res));
    } catch (err) {
      if (err instanceof Refused) return refusalPage(kit, res, err);
      next(err);
    }
  });
}

export interface ActionOptions {
  /** Where to go after a refusal without a form to show it beside (usually the page it came from). */
  back: (req: Request) => string;
  /**
   * A refusal shown beside the form's fields instead (the form page again, 4xx): called with the
   * refusal; returns false when it did not render (then the refusal goes back as an error).
   */
  form?: (req: Request, res: Response, err: Refused, api: PageApi) => Promise<boolean>;
}

/**
 * A declared page action (page-table.ts) served (POST): once per one-time token (once.ts), then 303 to the outcome's page with its
 * notice; a refusal comes back beside the fields (when the action has a form) or as the page's error.
 */
export function action(
  kit: Kit,
  router: Router,
  declared: PageAction,
  o: ActionOptions,
  act: (req: Request, res: Response, api: PageApi, token: string) => Promise<Outcome>,
): void {
  router.post(declared.path, async (req: Request, res: Response, next: NextFunction) => {
    const token = req.body?._once;
    const subject = sessionOf(res).subjectId;
    const expired = () =>
      kit.render(
        res,
        "Form expired",
        html`<p role="alert" class="error">This form has expired; go back, reload the page and send it again.</p>`,
        { status: 400 },
      );
    if (!validToken(token)) return expired();
    const api = pageApi(kit.call, res);
    try {
      const outcome = await kit.once.run(subject, token, async () => {
        try {
          return await act(req, res, api, token);
        } catch (err) {
          // A refusal without a form: the first submission's outcome is the error, shown on the page.
          if (err instanceof Refused && !o.form) return { location: o.back(req), error: err.message };
          throw err;
        }
      });
      if (outcome.expired) return expired();
      const to = outcome.location || o.back(req);
      res.redirect(303, `${to}${to.includes("?") ? "&" : "?"}done=${token}`);
    } catch (err) {
      if (err instanceof Refused && o.form) {
        try {
          if (await o.form(req, res, err, api)) return;
          return kit.render(
            res,
            "The request was refused",
            html`<p role="alert" class="error">${err.message}</p><p><a href="${o.back(req)}">Back</a></p>`,
            { status: err.status },
          );
        } catch (e) {
          return next(e);
        }
      }
      next(err);
    }
  });
}

/** Form field errors from a refusal: each violation by its field (renamed by `fields`), else general. */
export function fieldErrors(
  err: Refused,
  values: Record<string, string>,
  fields: Record<string, string> = {},
): { values: Record<string, string>; errors: Record<string, string>; general?: string } {
  const errors: Record<string, string> = {};
  for (const d of err.details) {
    const name = fields[d.field] ?? d.field;
    errors[name] = errors[name] ? `${errors[name]}; ${d.message}` : d.message;
  }
  return { values, errors, general: Object.keys(errors).length ? undefined : err.message };
}

/** A text field of the request body. */
export const bodyText = (req: Request, name: string) => {
  const v = req.body?.[name];
  return typeof v === "string" ? v : "";
};
