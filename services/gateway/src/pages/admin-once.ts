/**
 * The admin panel's write forms act at most once, as the portal's do (customer/once.ts): every
 * write form carries a one-time token (`formFields`), and the first submission with it claims it
 * and runs the route. Another submission with the same token (a double click, a reload of the POST,
 * Back and submit again, a retry after a slow answer) waits for the first one and then follows
 * the same redirect, instead of writing again.
 *
 * The route answers the first submission itself; its answer decides what the token keeps:
 * - a redirect (done): the same redirect for every repeat;
 * - a refusal (4xx, nothing written): the token is given back, so the form sent again acts;
 * - a page (2xx: a result shown once, such as a set-password link) or a failure (5xx: it may or
 *   may not have been done): repeats are told so and sent nowhere, never acting again.
 * A token past its lifetime that was never used is "Form expired" (400), as in the portal.
 */
import type { Request, Response } from "express";
import { type OnceStore, type Outcome, validToken } from "./customer/once.ts";
import { type Html, html } from "./html.ts";
import { sessionOf } from "./session.ts";

/** The first submission was refused: nothing was done, the token goes back. */
class NothingDone extends Error {}

const SHOWN_ONCE = "This form was already sent and done; its result was shown then.";
const NOT_KNOWN =
  "This form was already sent and did not finish cleanly: it may or may not have been done. Check the audit log before sending a new one.";

const EXPIRED = html`<p role="alert" class="error">This form has expired; go back, reload the page and send it again.</p>`;

type Show = (res: Response, title: string, body: Html, status: number) => void;

/** Runs `route` for the first submission of the form's token; see above for repeats. */
export function onceForm(once: OnceStore, show: Show) {
  return async (req: Request, res: Response, route: () => void): Promise<void> => {
    const token: unknown = req.body?._once;
    if (!validToken(token)) return show(res, "Form expired", EXPIRED, 400);
    let first = false;
    let outcome: Outcome;
    try {
      outcome = await once.run(sessionOf(res).subjectId, token, () => {
        first = true;
        return new Promise<Outcome>((resolve, reject) => {
          res.once("close", () => {
            const status = res.statusCode;
            if (status >= 300 && status < 400) resolve({ location: String(res.getHeader("location") ?? "") });
            else if (status >= 400 && status < 500) reject(new NothingDone());
            else
              resolve({ location: "", ...(status >= 500 ? { error: NOT_KNOWN } : { notice: SHOWN_ONCE }) });
          });
          route();
        });
      });
    } catch (err) {
      // The first submission answered (a refusal) itself.
      if (first) return;
      throw err;
    }
    if (first) return;
    if (outcome.expired) return show(res, "Form expired", EXPIRED, 400);
    if (outcome.location) return res.redirect(303, outcome.location);
    const message = outcome.error ?? outcome.notice ?? SHOWN_ONCE;
    show(
      res,
      "Form already sent",
      html`<p role="alert" class="${outcome.error ? "error" : "notice"}">${message}</p>`,
      outcome.error ? 409 : 200,
    );
  };
}
