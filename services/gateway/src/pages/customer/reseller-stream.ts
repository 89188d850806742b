import { PartnerStatusSchema } from "@hb/contracts/hb/auth/v1/partners_pb";
import type { Session } from "@hb/contracts/hb/auth/v1/portal_pb";
import { type ErrorCode, enumWord, errorCodes, resolveError } from "@hb/platform";
import type { NextFunction, Request, Response, Router } from "express";
import type { PageClients } from "../../clients.ts";
import { sendError } from "../../envelope.ts";
import { needOf } from "../../route.ts";
import { webhookStreamRoute } from "../../routes/webhook-stream.ts";
import { sessionRefusal } from "../../session-decision.ts";
import { html } from "../html.ts";
import { PORTAL, parseCookies, sessionOf } from "../session.ts";
import { operation, sessionPrincipal } from "./api.ts";
import type { Kit } from "./kit.ts";

/**
 * The live delivery stream of the reseller API (GET /reseller/webhooks/stream) on a page. A
 * server-sent stream cannot go through the in-process API (its answer never ends), so the page's
 * own event source asks the route's declared need with the same decision a session's API call
 * gets (sessionRefusal: scope, View Services, a partner profile) and then reads the same webhooks
 * stream the route relays. It sends each event's id, name and body, never its signed headers: a
 * browser has no use for a signature, and a page is not where a signing secret's output belongs.
 *
 * The stream holds while its session does, as a portal console does (console/socket.ts): every
 * `sessionCheckMs` it reads the session again and asks the same decision, and once the person has
 * signed out (or the session expired, or the person may no longer read) it sends `event: ended`
 * and closes, so a signed-out browser tab stops receiving the partner's events.
 */
const OP = operation("GET", "/reseller/webhooks/stream", "/portal/reseller/stream");
const ROUTE = webhookStreamRoute(0);
if (ROUTE.auth === "none") throw new Error("the event stream route is keyed");
/** The route's own declared need: scope, permission, read. */
const NEED = needOf({ method: ROUTE.method, auth: ROUTE.auth });
const HEARTBEAT_MS = 15_000;

/** Why the session may not (or no longer) follow the stream; undefined when it may. */
function streamRefusal(s: Session) {
  return sessionRefusal(
    sessionPrincipal(s),
    { scope: NEED.scope, permissionsAny: NEED.permissions, write: NEED.write, module: NEED.module },
    undefined,
    { partnerStatus: s.partnerStatus ? enumWord(PartnerStatusSchema, s.partnerStatus) : "" },
  );
}

export function resellerStreamRoutes(
  kit: Kit,
  router: Router,
  clients: Pick<PageClients, "portal" | "webhooks">,
  sessionCheckMs: number,
): void {
  const { webhooks } = clients;
  /** The session of `token` as auth has it now: undefined once signed out or expired. */
  async function liveSession(token: string): Promise<Session | undefined> {
    try {
      return (await clients.portal.getSession({ realm: PORTAL.realm, sessionToken: token })).session;
    } catch (err) {
      if (resolveError(err).code === "UNAUTHORIZED") return undefined;
      throw err;
    }
  }

  router.get("/reseller/stream", (_req, res) => {
    const body = html`<nav class="subnav" aria-label="Reseller panel"><a href="/portal/reseller/orders">Orders</a> · <a href="/portal/reseller/services">Services</a> · <a href="/portal/reseller">Settings</a></nav>
<p>Every webhook event of your account as it is raised, exactly as its delivery carries it (the API's <code>${OP.path}</code>); events raised before this page opened are not shown. Deliveries to your endpoint are unaffected.</p>
<p id="stream-state" role="status" data-event-stream="/portal/reseller/stream/events">This page needs JavaScript to follow events live; the delivery log is on <a href="/portal/reseller">Settings</a>.</p>
<ol id="stream-events" class="events" aria-label="Events received" aria-live="polite"></ol>`;
    kit.render(res, "Live events", body);
  });

  router.get("/reseller/stream/events", async (req: Request, res: Response, next: NextFunction) => {
    const s = sessionOf(res);
    const token = parseCookies(req.headers.cookie)[PORTAL.sessionCookie] ?? "";
    const refusal = streamRefusal(s);
    if (refusal) {
      const code = (refusal.code in errorCodes ? refusal.code : "FORBIDDEN") as ErrorCode;
      return sendError(res, code, refusal.message);
    }
    const gone = new AbortController();
    res.on("close", () => gone.abort());
    const feed = webhooks
      .streamEvents({ partnerId: s.customerId }, { signal: gone.signal, timeoutMs: 0 })
      [Symbol.asyncIterator]();
    let heartbeat: NodeJS.Timeout | undefined;
    let check: NodeJS.Timeout | undefined;
    /** Ends the stream for a reason the page shows (the feed's loop then ends). */
    const end = (reason: "signed-out" | "not-permitted") => {
      if (gone.signal.aborted) return;
      res.write(`event: ended\ndata: ${JSON.stringify({ reason })}\n\n`);
      gone.abort();
    };
    try {
      const first = await feed.next();
      if (first.done || first.value.item.case !== "opened") throw new Error("event stream did not open");
      res.writeHead(200, {
        "Content-Type": "text/event-stream; charset=utf-8",
        "Cache-Control": "no-cache, no-transform",
        "X-Accel-Buffering": "no",
      });
      req.socket.setNoDelay(true);
      res.write("event: ready\ndata: {}\n\n");
      heartbeat = setInterval(() => res.write(": heartbeat\n\n"), HEARTBEAT_MS);
      check = setInterval(() => {
        liveSession(token).then(
          (now) => {
            if (!now || now.subjectId !== s.subjectId || now.customerId !== s.customerId) end("signed-out");
            else if (streamRefusal(now)) end("not-permitted");
          },
          // auth unreachable for a moment: kept open, as a console is; the next check decides.
          () => undefined,
        );
      }, sessionCheckMs);
      for (let n = await feed.next(); !n.done; n = await feed.next()) {
        if (n.value.item.case !== "delivery") continue;
        const { id, event, body } = n.value.item.value;
        res.write(`id: ${id}\nevent: delivery\ndata: ${JSON.stringify({ id, event, body })}\n\n`);
      }
    } catch (err) {
      // A refusal before the stream opened (too many open streams) is the API's answer; once it
      // is open, the feed ends in an abort when the stream is ended above or the browser left.
      if (!res.headersSent) {
        const e = resolveError(err);
        return e.status < 500 ? sendError(res, e.code as ErrorCode, e.message) : next(err);
      }
    } finally {
      clearInterval(heartbeat);
      clearInterval(check);
      gone.abort();
      if (res.headersSent) res.end();
    }
  });
}
