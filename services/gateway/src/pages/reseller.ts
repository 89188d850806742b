import { PartnerStatus, PartnerStatusSchema } from "@hb/contracts/hb/auth/v1/partners_pb";
import { type Delivery, DeliveryStatusSchema } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { enumWord, resolveError } from "@hb/platform";
import type { Request, Response, Router } from "express";
import type { PageClients } from "../clients.ts";
import { operation } from "./customer/api.ts";
import { when } from "./format.ts";
import { csrfField, emptyForm, type FormState, field, formErrors, generalError } from "./forms.ts";
import { type Html, html } from "./html.ts";
import { sessionOf } from "./session.ts";

type Render = (
  res: Response,
  title: string,
  body: Html,
  o: { notice?: string; status?: number; nav: boolean },
) => void;

const NAV = true;

// The page's webhook forms make the webhooks service calls the signed routes make (SetWebhookUrl,
// QueueTest), for the owner (who holds Manage Services), refused for a partner that is not active
// with the API's words (readOnlyReason).
operation("PUT", "/reseller/account/webhook", "/portal/reseller/webhook");
operation("POST", "/reseller/webhooks/test", "/portal/reseller/test");
const DELIVERIES_SHOWN = 100;

const statusWord = (s: PartnerStatus) => enumWord(PartnerStatusSchema, s);
const STATUS_TEXT: Record<PartnerStatus, string> = {
  [PartnerStatus.UNSPECIFIED]: "",
  [PartnerStatus.PENDING]:
    "Pending: your application is waiting for approval. You can read through the reseller API; orders, changes and webhook deliveries start once it is approved.",
  [PartnerStatus.ACTIVE]: "Active: signed reseller requests are accepted and webhooks are delivered.",
  [PartnerStatus.SUSPENDED]:
    "Suspended: you can read through the reseller API; writes are refused and no webhooks are delivered.",
};

/**
 * Reseller programme in the client portal: applying (the signing secret is issued then, shown
 * once), the profile's status, and API Settings: the Webhooks panel (URL, through the webhooks
 * service's SetWebhookUrl so its rules and messages are the API's), secret rotation, the
 * partner's own delivery log and a test event. The account owner's: the secret signs the
 * account's reseller requests, which is the owner's to hand out.
 */
export function resellerRoutes(router: Router, clients: PageClients, render: Render) {
  const onlyOwner = (res: Response) =>
    render(res, "Reseller", html`<p>Only the account owner manages the reseller programme.</p>`, {
      status: 403,
      nav: NAV,
    });
  const ownerOnly =
    (fn: (req: Request, res: Response) => Promise<void>) =>
    (req: Request, res: Response, next: (e: unknown) => void) => {
      res.locals.current = "/portal/reseller";
      if (!sessionOf(res).isOwner) return onlyOwner(res);
      fn(req, res).catch(next);
    };

  /**
   * The reseller API refuses a pending or suspended partner's writes (auth's verify.ts): the page
   * refuses the same writes with the same words, and says so beside the disabled forms.
   */
  const readOnlyReason = (status: PartnerStatus) =>
    status === PartnerStatus.ACTIVE
      ? undefined
      : `The reseller partner profile is ${statusWord(status)}: read access only`;

  async function resellerPage(
    res: Response,
    o: { url?: FormState; secret?: { title: string; value: string }; notice?: string; status?: number } = {},
  ) {
    const s = sessionOf(res);
    if (s.partnerStatus === PartnerStatus.UNSPECIFIED) {
      return render(
        res,
        "Reseller",
        html`<p>The reseller programme lets you order and manage services for your own customers through the reseller API, and sends signed webhooks to your endpoint when their orders and services change.</p>
<p>When you apply, a signing secret is issued and shown once: it signs your reseller requests and the webhooks we send you. Staff approve the application.</p>
<form method="post" action="/portal/reseller/apply">${csrfField(s.csrfToken)}<button type="submit">Apply to the reseller programme</button></form>`,
        { nav: NAV, notice: o.notice, status: o.status },
      );
    }
    const [{ url }, { deliveries }] = await Promise.all([
      clients.webhooks.getWebhook({ partnerId: s.customerId }),
      clients.webhooks.listDeliveries({ partnerId: s.customerId, limit: DELIVERIES_SHOWN }),
    ]);
    const urlForm = o.url ?? emptyForm({ url });
    const readOnly = readOnlyReason(s.partnerStatus);
    const body = html`${o.secret ? secretPanel(o.secret.title, o.secret.value) : ""}
<p>Status: <strong id="partner-status">${statusWord(s.partnerStatus)}</strong>. ${STATUS_TEXT[s.partnerStatus]}</p>
<p>Your customers' <a href="/portal/reseller/orders">orders</a> and <a href="/portal/reseller/services">services</a> (retry a payment, suspend, unsuspend, terminate) and the <a href="/portal/reseller/stream">live events</a> are in the reseller panel.</p>
<h2>API Settings</h2>
<section class="card" aria-labelledby="webhooks-title">
<h3 id="webhooks-title">Webhooks</h3>
${readOnly ? html`<p class="warning" id="partner-read-only">${readOnly}. The webhook URL and test events are available once staff approve the profile.</p>` : ""}
<form method="post" action="/portal/reseller/webhook" novalidate>
${csrfField(s.csrfToken)}
${generalError(urlForm)}
<fieldset${readOnly ? html` disabled aria-describedby="partner-read-only"` : ""}><legend class="sr">Webhook URL</legend>
${field(urlForm, "url", "Webhook URL", { type: "url", hint: "An absolute http or https URL on a public host. Leave empty to stop deliveries." })}
<button type="submit">Save webhook URL</button>
</fieldset>
</form>
<form method="post" action="/portal/reseller/test" class="inline">${csrfField(s.csrfToken)}<button type="submit"${readOnly ? html` disabled aria-describedby="partner-read-only"` : ""}>Send test event</button></form>
</section>
<section class="card" aria-labelledby="secret-heading">
<h3 id="secret-heading">Secret rotation</h3>
<p>The secret signs your reseller requests and our webhooks. It is never shown again after it is issued.</p>
<p><a href="/portal/reseller/rotate">Rotate the signing secret</a></p>
</section>
<h2>Deliveries</h2>
${deliveryTable(deliveries)}`;
    render(res, "Reseller", body, { nav: NAV, notice: o.notice, status: o.status });
  }

  router.get(
    "/reseller",
    ownerOnly((req, res) =>
      resellerPage(res, { notice: req.query.queued ? "Test event queued." : undefined }),
    ),
  );

  router.post(
    "/reseller/apply",
    ownerOnly(async (_req, res) => {
      try {
        const r = await clients.auth.createPartner({
          customerId: sessionOf(res).customerId,
          status: PartnerStatus.PENDING,
        });
        sessionOf(res).partnerStatus = r.partner?.status ?? PartnerStatus.PENDING;
        await resellerPage(res, {
          secret: { title: "Your signing secret", value: r.signingSecret },
          notice: "Your application is received.",
        });
      } catch (err) {
        const e = resolveError(err);
        if (e.status >= 500) throw err;
        await resellerPage(res, { notice: e.message, status: e.status });
      }
    }),
  );

  router.post(
    "/reseller/webhook",
    ownerOnly(async (req, res) => {
      const values = { url: String(req.body.url ?? "") };
      const readOnly = readOnlyReason(sessionOf(res).partnerStatus);
      if (readOnly) return resellerPage(res, { url: { values, errors: {}, general: readOnly }, status: 403 });
      try {
        const r = await clients.webhooks.setWebhookUrl({
          partnerId: sessionOf(res).customerId,
          url: values.url,
        });
        await resellerPage(res, {
          url: emptyForm({ url: r.url }),
          notice: r.url ? "Webhook URL saved." : "Webhook URL cleared.",
        });
      } catch (err) {
        await resellerPage(res, { url: formErrors(err, values), status: resolveError(err).status });
      }
    }),
  );

  router.post(
    "/reseller/test",
    ownerOnly(async (_req, res) => {
      const readOnly = readOnlyReason(sessionOf(res).partnerStatus);
      if (readOnly) return resellerPage(res, { notice: readOnly, status: 403 });
      try {
        await clients.webhooks.queueTest({ partnerId: sessionOf(res).customerId });
        res.redirect(303, "/portal/reseller?queued=1");
      } catch (err) {
        const e = resolveError(err);
        if (e.status >= 500) throw err;
        await resellerPage(res, { notice: e.message, status: e.status });
      }
    }),
  );

  router.get(
    "/reseller/rotate",
    ownerOnly(async (_req, res) => {
      render(
        res,
        "Rotate the signing secret",
        html`<p class="warning"><strong>The current secret stops working the moment you confirm.</strong> Every reseller request signed with it is refused from then on, with no overlap, and webhooks are signed with the new one. The new secret is shown once.</p>
<form method="post" action="/portal/reseller/rotate">
${csrfField(sessionOf(res).csrfToken)}
<button type="submit" class="danger">Rotate the secret now</button> <a href="/portal/reseller">Cancel</a>
</form>`,
        { nav: NAV },
      );
    }),
  );

  router.post(
    "/reseller/rotate",
    ownerOnly(async (_req, res) => {
      if (sessionOf(res).partnerStatus === PartnerStatus.UNSPECIFIED) return resellerPage(res);
      const r = await clients.auth.rotatePartnerSecret({ customerId: sessionOf(res).customerId });
      await resellerPage(res, {
        secret: { title: "Your new signing secret", value: r.signingSecret },
        notice: "The signing secret is rotated; the old one no longer works.",
      });
    }),
  );
}

function secretPanel(title: string, secret: string): Html {
  return html`<section class="secret" aria-labelledby="secret-title">
<h2 id="secret-title">${title}</h2>
<p class="warning"><strong>Copy this secret now. It is shown only this once</strong> and cannot be shown again; if you lose it, rotate it.</p>
<label for="new-secret">Signing secret</label>
<div class="copy-row"><input id="new-secret" class="mono" readonly value="${secret}"> <button type="button" data-copy="new-secret" hidden>Copy</button></div>
</section>`;
}

/** The partner's deliveries, newest first: event, status, attempts, last response, time. */
export function deliveryTable(list: Delivery[], label = "Deliveries"): Html {
  if (!list.length) return html`<p>No deliveries yet.</p>`;
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="${label}">
<table>
<thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Response</th><th scope="col">Delivered</th></tr></thead>
<tbody>${list.map(
    (d) => html`<tr>
<td>${when(d.createdAt)}</td><td class="mono">${d.event}</td><td>${enumWord(DeliveryStatusSchema, d.status)}</td>
<td>${d.attempts}</td><td>${d.responseCode ? String(d.responseCode) : ""}${d.lastError ? html` <span class="hint">${d.lastError}</span>` : ""}</td>
<td>${d.deliveredAt ? when(d.deliveredAt) : "—"}</td>
</tr>`,
  )}</tbody></table></div>`;
}
