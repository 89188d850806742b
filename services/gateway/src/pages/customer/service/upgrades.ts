import type { Router } from "express";
import type { z } from "zod";
import type { addonList, availableAddonList } from "../../../wire/addon.ts";
import type { upgradeDetail, upgradePaths } from "../../../wire/upgrade.ts";
import { html } from "../../html.ts";
import { sessionOf } from "../../session.ts";
import { action, bodyText, doneOf, type Kit, page } from "../kit.ts";
import { orderLink, serviceLink } from "../names.ts";
import { may } from "../page-table.ts";
import { at, badge, buttonForm, facts, formTokens, money, table } from "../ui.ts";
import { ACT, attempt, back, detailOf, OPS, serviceTabs, svcBase } from "./table.ts";

/** Upgrades: the quote, request, options change, cancel. */
export function upgradeRoutes(kit: Kit, router: Router): void {
  page(kit, router, "/services/:id/upgrades", async (req, res, api) => {
    const s = await detailOf(api, String(req.params.id));
    const id = s.id;
    const session = sessionOf(res);
    const csrf = session.csrfToken;
    const [q, held, offers] = await Promise.all([
      attempt(api<z.infer<typeof upgradePaths>>(OPS.upgrades, { params: { id } })),
      attempt(api<z.infer<typeof addonList>>(OPS.addons, { params: { id } })),
      attempt(api<z.infer<typeof availableAddonList>>(OPS.addonOffers, { params: { id } })),
    ]);
    const p = q.value;
    const holding = held.value?.options ?? [];
    const adding = (offers.value?.options ?? []).filter((o) => !holding.some((h) => h.option_id === o.id));
    const body = html`${serviceTabs(res, s, `${svcBase(id)}/upgrades`)}
${p?.pending_upgrade ? html`<p class="notice">An upgrade is pending: <a href="/portal/upgrades/${p.pending_upgrade.id}">${p.pending_upgrade.status.replaceAll("_", " ")}</a>.</p>` : ""}
${p ? html`<p>Now: ${p.current.name}, ${money(p.current.amount, s.billing.currency)} / ${p.current.cycle}.</p>` : html`<p class="empty">${q.refused}</p>`}
<h2>Change the plan</h2>
${table(
  "Upgrade paths",
  ["Plan", "Price", "To pay now", ...(may(session, ACT.requestUpgrade) ? ["Request"] : [])],
  (p?.paths ?? []).map((u) => [
    u.name,
    `${money(u.price, s.billing.currency)} / ${u.cycle}`,
    money(u.prorated_amount, s.billing.currency),
    ...(may(session, ACT.requestUpgrade)
      ? [
          buttonForm(`${svcBase(id)}/upgrades`, "Request this upgrade", csrf, {
            fields: { toProductId: u.product_id },
            aria: `Upgrade to ${u.name}`,
          }),
        ]
      : []),
  ]),
  "No other plan is available for this service.",
)}
${p?.paths.length ? html`<p class="hint" id="quote-holds">An upgrade you request is invoiced at the amount to pay now, and that price holds until it expires at the end of the current term (${at(p.paths[0].paid_until)}): paid by then, the invoice is charged exactly what it says. Unpaid by then, it expires and you can request the upgrade again at that day's price.</p>` : ""}
${
  !may(session, ACT.optionChange)
    ? ""
    : holding.length || adding.length
      ? html`<h2>Change add-ons with the plan's proration</h2><form method="post" action="${svcBase(id)}/upgrades/options">${formTokens(csrf)}
${adding.length ? html`<fieldset class="field"><legend>Add these add-ons</legend>${adding.map((o, n) => html`<div><input type="checkbox" id="add-${n}" name="addOptions" value="${o.id}"> <label for="add-${n}">${o.name}</label></div>`)}</fieldset>` : ""}
${holding.length ? html`<fieldset class="field"><legend>Remove these add-ons</legend>${holding.map((o, n) => html`<div><input type="checkbox" id="rm-${n}" name="removeOptions" value="${o.option_id}"> <label for="rm-${n}">${o.name}</label></div>`)}</fieldset>` : ""}
<button type="submit">Request the change</button></form>`
      : html`<h2>Change add-ons with the plan's proration</h2><p class="empty">No add-on to add or remove for this service.</p>`
}`;
    kit.render(res, `Upgrades of ${s.hostname || s.name}`, body, await doneOf(kit, req, res));
  });
  const upgradeOutcome = (r: { data: { upgrade?: { id: string }; id?: string } }) => {
    const uid = r.data.upgrade?.id ?? r.data.id;
    return { location: uid ? `/portal/upgrades/${uid}` : "", notice: "The upgrade is requested." };
  };
  action(kit, router, ACT.requestUpgrade, { back }, async (req, _res, api, token) =>
    upgradeOutcome(
      await api(OPS.requestUpgrade, {
        params: { id: String(req.params.id) },
        body: { toProductId: bodyText(req, "toProductId") },
        token,
      }),
    ),
  );
  action(kit, router, ACT.optionChange, { back }, async (req, _res, api, token) => {
    // The boxes ticked, as the API's lists (its schema refuses an id in both).
    const list = (name: string) => [req.body?.[name] ?? []].flat().map(String);
    return upgradeOutcome(
      await api(OPS.optionChange, {
        params: { id: String(req.params.id) },
        body: { addOptions: list("addOptions"), removeOptions: list("removeOptions") },
        token,
      }),
    );
  });
  page(kit, router, "/upgrades/:id", async (req, res, api) => {
    const u = (
      await api<z.infer<typeof upgradeDetail>>(OPS.upgrade, { params: { id: String(req.params.id) } })
    ).data;
    // One upgrade names one service: its hostname from the service's own record (the upgrade
    // carries the id); a service no longer readable is named by its id.
    const service = await attempt(
      api<{ hostname: string; name: string }>(OPS.detail, { params: { id: u.service_id } }),
    );
    const cur = u.document?.currency ?? sessionOf(res).currency;
    const body = html`${facts([
      ["Status", badge(u.status)],
      ["Type", u.type],
      ["Service", serviceLink(u.service_id, service.value?.hostname || service.value?.name)],
      ["Order", u.order ? orderLink(u.order.id, u.order.order_number) : undefined],
      ["Amount", money(u.amount, cur)],
      ["Credit", money(u.credit, cur)],
      ["Price holds until", at(u.priced_until)],
      [
        "Invoice",
        u.document ? html`<a href="/portal/invoices/${u.document.id}">${u.document.number}</a>` : undefined,
      ],
      ["Requested", at(u.created_at)],
      ["Completed", at(u.completed_at)],
    ])}
${
  u.status === "awaiting_payment" && u.priced_until
    ? html`<p id="quote-holds">This price holds until it expires on ${at(u.priced_until)}: pay ${u.document ? html`the invoice <a href="/portal/invoices/${u.document.id}">${u.document.number}</a>` : "it"} by then and it is charged exactly ${money(u.amount, cur)}. Unpaid by then, the upgrade expires and its invoice is cancelled; you can request it again at that day's price.</p>`
    : ""
}
${u.status === "awaiting_payment" && may(sessionOf(res), ACT.cancelUpgrade) ? buttonForm(`/portal/upgrades/${u.id}/cancel`, "Cancel the upgrade", sessionOf(res).csrfToken, { danger: true }) : ""}`;
    kit.render(
      res,
      `Upgrade of ${service.value?.hostname || service.value?.name || "a service"}`,
      body,
      await doneOf(kit, req, res),
    );
  });
  action(
    kit,
    router,
    ACT.cancelUpgrade,
    { back: (req) => `/portal/upgrades/${String(req.params.id)}` },
    async (req, _res, api, token) => {
      await api(OPS.cancelUpgrade, { params: { id: String(req.params.id) }, token });
      return { location: `/portal/upgrades/${String(req.params.id)}`, notice: "The upgrade is cancelled." };
    },
  );
}
