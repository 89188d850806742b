import { PartnerStatus, PartnerStatusSchema } from "@hb/contracts/hb/auth/v1/partners_pb";
import type { ListedPartner } from "@hb/contracts/hb/auth/v1/portal_pb";
import { DeliveryStatus, DeliveryStatusSchema } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { enumOfWord, enumWord, isUuid, PAGE_SIZE, resolveError } from "@hb/platform";
import type { Request, Response, Router } from "express";
import { allowed } from "./admin-actions.ts";
import type { AdminDeps } from "./admin-page.ts";
import { paginate, when } from "./format.ts";
import { emptyForm, type FormState, field, formErrors, formFields, generalError } from "./forms.ts";
import { type Html, html } from "./html.ts";
import { logFilterOf, requestLogView } from "./request-log.ts";
import { deliveryTable } from "./reseller.ts";
import { sessionOf } from "./session.ts";
import type { Audited } from "./staff-audit.ts";

const CURRENT = "/admin/partners";
const word = (s: PartnerStatus) => enumWord(PartnerStatusSchema, s);
const PARTNER_STATUSES = [PartnerStatus.PENDING, PartnerStatus.ACTIVE, PartnerStatus.SUSPENDED];
const DELIVERY_STATUSES = [
  DeliveryStatus.PENDING,
  DeliveryStatus.DELIVERED,
  DeliveryStatus.FAILED,
  DeliveryStatus.CANCELLED,
];

/** A select of enum words with "Any" first; the chosen word kept. */
function wordSelect(id: string, name: string, label: string, words: string[], chosen: string): Html {
  return html`<div class="field"><label for="${id}">${label}</label>
<select id="${id}" name="${name}">${["", ...words].map(
    (w) => html`<option value="${w}"${w === chosen ? html` selected` : ""}>${w || "Any"}</option>`,
  )}</select></div>`;
}

function pager(base: string, params: Record<string, string>, page: number, pages: number): Html | string {
  if (pages <= 1) return "";
  const link = (n: number) => `${base}?${new URLSearchParams({ ...params, page: String(n) })}`;
  return html`<nav aria-label="Pages" class="pager">${page > 1 ? html`<a href="${link(page - 1)}">Newer</a>` : ""} ${
    page < pages ? html`<a href="${link(page + 1)}">Older</a>` : ""
  }</nav>`;
}

const query = (req: Request, name: string) => (typeof req.query[name] === "string" ? req.query[name] : "");

/**
 * Partners in the admin panel: the list (filter by status), a partner's standing (approve,
 * suspend), its API Settings tab (webhook URL through the webhooks service's SetWebhookUrl, the
 * same rules as the API; secret rotation, the new value shown once) and its Activity tab
 * (deliveries and the request log, filtered and paginated). View clients to see, edit clients to
 * change.
 */
export function partnerRoutes(router: Router, d: AdminDeps) {
  const { clients, render, needs, act } = d;
  router.get(
    "/partners",
    needs("view_clients", CURRENT, async (req, res) => {
      const status = query(req, "status");
      const { partners } = await clients.portal.listPartners({
        customerId: "",
        status: enumOfWord<PartnerStatus>(PartnerStatusSchema, status) ?? PartnerStatus.UNSPECIFIED,
      });
      const p = paginate(partners, req.query.page, PAGE_SIZE.staff);
      const body = html`<form method="get" action="/admin/partners" class="filters" aria-label="Filter the partners">
${wordSelect("partner-status", "status", "Status", PARTNER_STATUSES.map(word), status)}
<button type="submit">Filter</button>
</form>
<p>${p.total} ${p.total === 1 ? "partner" : "partners"}${p.pages > 1 ? `, page ${p.page} of ${p.pages}` : ""}.</p>
${
  p.rows.length
    ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Partners"><table>
<thead><tr><th scope="col">Name</th><th scope="col">E-mail</th><th scope="col">Company</th><th scope="col">Status</th><th scope="col">Applied</th></tr></thead>
<tbody>${p.rows.map(
        (
          l,
        ) => html`<tr><td><a href="/admin/partners/${l.partner!.customerId}">${l.customerName}</a></td><td>${l.customerEmail}</td>
<td>${l.company || "—"}</td><td>${word(l.partner!.status)}</td><td>${when(l.partner!.createdAt)}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>No partners.</p>`
}
${pager("/admin/partners", { status }, p.page, p.pages)}`;
      render(res, "Partners", body, { current: CURRENT });
    }),
  );

  const find = async (id: string): Promise<ListedPartner | undefined> => {
    if (!isUuid(id)) return undefined;
    return (await clients.portal.listPartners({ customerId: id })).partners[0];
  };
  const notFound = (res: Response) =>
    render(
      res,
      "Partner not found",
      html`<p>No such partner. <a href="/admin/partners">Back to Partners</a></p>`,
      {
        status: 404,
        current: CURRENT,
      },
    );

  /** The partner's header (standing and its actions) and the two tabs. */
  function partnerPage(
    res: Response,
    l: ListedPartner,
    tab: "settings" | "activity",
    content: Html,
    o: { notice?: string; status?: number; secret?: string } = {},
  ) {
    const s = sessionOf(res);
    const p = l.partner!;
    const id = p.customerId;
    const action = (to: PartnerStatus, label: string, danger = false) =>
      html`<form method="post" action="/admin/partners/${id}/${to === PartnerStatus.ACTIVE ? "approve" : "suspend"}" class="inline">${formFields(s.csrfToken)}<button type="submit"${danger ? html` class="danger"` : ""}>${label}</button></form>`;
    const tabLink = (t: typeof tab, href: string, label: string) =>
      html`<a href="${href}"${t === tab ? html` aria-current="page"` : ""}>${label}</a>`;
    const body = html`${
      o.secret
        ? html`<section class="secret" aria-labelledby="secret-title"><h2 id="secret-title">New signing secret</h2>
<p class="warning"><strong>Copy this secret now. It is shown only this once</strong>; hand it to the partner. The old one no longer works.</p>
<label for="new-secret">Signing secret</label><div class="copy-row"><input id="new-secret" class="mono" readonly value="${o.secret}"> <button type="button" data-copy="new-secret" hidden>Copy</button></div></section>`
        : ""
    }
<dl class="facts"><dt>Customer</dt><dd><a href="/admin/customers/${id}">${l.customerName}</a></dd><dt>E-mail</dt><dd>${l.customerEmail}</dd>
<dt>Status</dt><dd id="partner-status">${word(p.status)}</dd><dt>Applied</dt><dd>${when(p.createdAt)}</dd>
<dt>Signing secret</dt><dd>${p.hasSecret ? `issued ${when(p.secretRotatedAt)}` : "none"}</dd></dl>
<p>${p.status !== PartnerStatus.ACTIVE && allowed(res, "partner.approve") ? action(PartnerStatus.ACTIVE, p.status === PartnerStatus.PENDING ? `Approve ${l.customerName}` : `Reactivate ${l.customerName}`) : ""}${
      p.status !== PartnerStatus.SUSPENDED && allowed(res, "partner.suspend")
        ? action(PartnerStatus.SUSPENDED, `Suspend ${l.customerName}`, true)
        : ""
    }</p>
<nav aria-label="Partner" class="tabs">${tabLink("settings", `/admin/partners/${id}`, "API Settings")} ${tabLink("activity", `/admin/partners/${id}/activity`, "Activity")}</nav>
${content}`;
    render(res, l.customerName, body, { notice: o.notice, status: o.status, current: CURRENT });
  }

  async function settingsTab(
    res: Response,
    l: ListedPartner,
    o: { f?: FormState; notice?: string; status?: number; secret?: string } = {},
  ) {
    const s = sessionOf(res);
    const id = l.partner!.customerId;
    const { url } = await clients.webhooks.getWebhook({ partnerId: id });
    const f = o.f ?? emptyForm({ url });
    const content = allowed(res, "partner.webhook_url")
      ? html`<h2>Webhook URL</h2>
<form method="post" action="/admin/partners/${id}/webhook" novalidate>
${formFields(s.csrfToken)}
${generalError(f)}
${field(f, "url", "Webhook URL", { type: "url", hint: "An absolute http or https URL on a public host. Empty clears it." })}
<button type="submit">Save webhook URL</button>
</form>
${
  allowed(res, "partner.rotate_secret")
    ? html`<h2>Signing secret</h2>
<p><a href="/admin/partners/${id}/rotate">Rotate the signing secret</a></p>`
    : ""
}`
      : html`<h2>Webhook URL</h2><p class="mono">${url || "None on file"}</p>`;
    partnerPage(res, l, "settings", content, o);
  }

  const withPartner =
    (fn: (req: Request, res: Response, l: ListedPartner) => Promise<void>) =>
    async (req: Request, res: Response) => {
      const l = await find(String(req.params.id));
      if (!l) return notFound(res);
      await fn(req, res, l);
    };

  router.get(
    "/partners/:id",
    needs(
      "view_clients",
      CURRENT,
      withPartner((_req, res, l) => settingsTab(res, l)),
    ),
  );

  /** An action on a partner the path names; 404 when it names none. */
  const onPartner =
    <B>(fn: (req: Request, res: Response, l: ListedPartner, body: B, audited: Audited) => Promise<void>) =>
    async (req: Request, res: Response, body: B, audited: Audited) => {
      const l = await find(String(req.params.id));
      if (!l) return notFound(res);
      await fn(req, res, l, body, audited);
    };

  act(
    "partner.webhook_url",
    onPartner(async (_req, res, l, values: { url: string }, audited) => {
      try {
        const partnerId = l.partner!.customerId;
        const { url: before } = await clients.webhooks.getWebhook({ partnerId });
        const r = await audited(
          res,
          { action: "partner.webhook_url", customerId: partnerId, before: { url: before }, after: values },
          () => clients.webhooks.setWebhookUrl({ partnerId, url: values.url }),
          (r) => ({ after: { url: r.url } }),
        );
        await settingsTab(res, l, {
          f: emptyForm({ url: r.url }),
          notice: r.url ? "Webhook URL saved." : "Webhook URL cleared.",
        });
      } catch (err) {
        await settingsTab(res, l, { f: formErrors(err, values), status: resolveError(err).status });
      }
    }),
  );

  router.get(
    "/partners/:id/rotate",
    needs(
      "edit_clients",
      CURRENT,
      withPartner(async (_req, res, l) => {
        const id = l.partner!.customerId;
        partnerPage(
          res,
          l,
          "settings",
          html`<h2>Rotate the signing secret</h2>
<p class="warning"><strong>The current secret stops working the moment you confirm.</strong> The partner's reseller requests signed with it are refused from then on, with no overlap, and webhooks are signed with the new one. The new secret is shown once.</p>
<form method="post" action="/admin/partners/${id}/rotate">${formFields(sessionOf(res).csrfToken)}
<button type="submit" class="danger">Rotate the secret now</button> <a href="/admin/partners/${id}">Cancel</a></form>`,
        );
      }),
    ),
  );

  act(
    "partner.rotate_secret",
    onPartner(async (_req, res, l, _body, audited) => {
      const customerId = l.partner!.customerId;
      // The secret itself is never recorded: only that it was replaced.
      const r = await audited(
        res,
        { action: "partner.rotate_secret", customerId, after: { secret: "replaced" } },
        () => clients.auth.rotatePartnerSecret({ customerId }),
      );
      await settingsTab(res, { ...l, partner: r.partner } as ListedPartner, {
        secret: r.signingSecret,
        notice: "The signing secret is rotated; the old one no longer works.",
      });
    }),
  );

  for (const [action, status, notice] of [
    ["approve", PartnerStatus.ACTIVE, "The partner is active."],
    ["suspend", PartnerStatus.SUSPENDED, "The partner is suspended."],
  ] as const) {
    act(
      `partner.${action}`,
      onPartner(async (_req, res, l, _body, audited) => {
        const customerId = l.partner!.customerId;
        const r = await audited(
          res,
          {
            action: `partner.${action}`,
            customerId,
            before: { status: word(l.partner!.status) },
            after: { status: word(status) },
          },
          () => clients.auth.setPartnerStatus({ customerId, status }),
        );
        await settingsTab(res, { ...l, partner: r.partner } as ListedPartner, { notice });
      }),
    );
  }

  router.get(
    "/partners/:id/activity",
    needs(
      "view_clients",
      CURRENT,
      withPartner(async (req, res, l) => {
        const id = l.partner!.customerId;
        const [{ deliveries }, { entries }] = await Promise.all([
          clients.webhooks.listDeliveries({ partnerId: id, limit: 1000 }),
          clients.auth.staffListRequestLog({
            staffId: sessionOf(res).subjectId,
            customerId: id,
            limit: 1000,
          }),
        ]);
        const event = query(req, "event");
        const dstatus = query(req, "delivery_status");
        const shown = deliveries.filter(
          (d) =>
            (!event || d.event.includes(event)) &&
            (!dstatus || enumWord(DeliveryStatusSchema, d.status) === dstatus),
        );
        const p = paginate(shown, req.query.delivery_page, PAGE_SIZE.staff);
        const base = `/admin/partners/${id}/activity`;
        const content = html`<h2>Deliveries</h2>
<form method="get" action="${base}" class="filters" aria-label="Filter the deliveries">
${wordSelect(
  "delivery-status",
  "delivery_status",
  "Status",
  DELIVERY_STATUSES.map((s) => enumWord(DeliveryStatusSchema, s)),
  dstatus,
)}
<div class="field"><label for="delivery-event">Event contains</label><input id="delivery-event" name="event" value="${event}"></div>
<button type="submit">Filter</button>
</form>
<p>${p.total} ${p.total === 1 ? "delivery" : "deliveries"} in the last 30 days${p.pages > 1 ? `, page ${p.page} of ${p.pages}` : ""}.</p>
${deliveryTable(p.rows)}
${pagerFor(base, { event, delivery_status: dstatus }, p.page, p.pages)}
<h2>Request log</h2>
${requestLogView(entries, logFilterOf(req.query), base, { duration: true })}`;
        partnerPage(res, l, "activity", content);
      }),
    ),
  );
}

// The deliveries' pager has its own page parameter so it and the request log page separately.
function pagerFor(base: string, params: Record<string, string>, page: number, pages: number) {
  if (pages <= 1) return "";
  const link = (n: number) => `${base}?${new URLSearchParams({ ...params, delivery_page: String(n) })}`;
  return html`<nav aria-label="Pages of deliveries" class="pager">${page > 1 ? html`<a href="${link(page - 1)}">Newer</a>` : ""} ${
    page < pages ? html`<a href="${link(page + 1)}">Older</a>` : ""
  }</nav>`;
}
