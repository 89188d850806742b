import type { Request, Router } from "express";
import type { z } from "zod";
import type { addonList, availableAddonList } from "../../../wire/addon.ts";
import { html } from "../../html.ts";
import { sessionOf } from "../../session.ts";
import { action, bodyText, doneOf, type Kit, page } from "../kit.ts";
import { may } from "../page-table.ts";
import { at, badge, formTokens, money, table } from "../ui.ts";
import { ACT, attempt, detailOf, notYours, OPS, serviceTabs, svcBase } from "./table.ts";

/** Add-ons: what the service has, what it can buy (priced first), buy and give up. */
export function addonRoutes(kit: Kit, router: Router): void {
  page(kit, router, "/services/:id/addons", async (req, res, api) => {
    const s = await detailOf(api, String(req.params.id));
    const id = s.id;
    const session = sessionOf(res);
    const csrf = session.csrfToken;
    const [held, offers] = await Promise.all([
      api<z.infer<typeof addonList>>(OPS.addons, { params: { id } }),
      attempt(api<z.infer<typeof availableAddonList>>(OPS.addonOffers, { params: { id } })),
    ]);
    const offerRows = offers.value?.options ?? [];
    const cur = s.billing.currency;
    const cycle = s.billing.cycle;
    const body = html`${serviceTabs(res, s, `${svcBase(id)}/addons`)}
<h2>Add-ons of this service</h2>
${table(
  "Add-ons",
  ["Name", "Billing", "Quantity", "Amount", "Status", "Next due", ""],
  held.data.options.map((o) => [
    o.name,
    `${o.billing_type.replace("_", " ")}${o.billing_type === "recurring" ? ` (${o.billing_cycle})` : ""}`,
    String(o.quantity),
    money(o.amount, s.billing.currency),
    badge(o.status),
    at(o.next_due_date),
    may(session, ACT.giveUpAddon)
      ? html`<a href="${svcBase(id)}/addons/${o.option_id}/give-up">Give up<span class="sr"> ${o.name}</span></a>`
      : "",
  ]),
  "This service has no add-ons.",
)}
${
  !may(session, ACT.buyAddon)
    ? ""
    : offerRows.length
      ? html`<h2>Buy an add-on</h2><form method="post" action="${svcBase(id)}/addons" novalidate>${formTokens(csrf)}
<div class="field"><label for="f-option">Add-on</label><select id="f-option" name="optionId">${offerRows.map((o) => html`<option value="${o.id}">${o.name}${o.held ? " (held)" : ""}</option>`)}</select></div>
<div class="field"><label for="f-billing">Billing</label><select id="f-billing" name="billingType"><option value="recurring">Recurring</option><option value="one_time">One time</option></select></div>
<div class="field"><label for="f-cycle">Billing cycle of a recurring add-on</label><select id="f-cycle" name="billingCycle"><option value="">The service's own (${cycle})</option>${cyclesOf(
          offerRows,
        )
          .filter((c) => c !== cycle)
          .map((c) => html`<option value="${c}">${c}</option>`)}</select></div>
<div class="field"><label for="f-qty">Quantity</label><input id="f-qty" name="quantity" type="number" min="1" max="100" value="1"></div>
<button type="submit">Buy the add-on</button></form>
${table(
  "Add-on prices",
  ["Add-on", `Recurring, per ${cycle} term`, "One time"],
  offerRows.map((o) => {
    const recurring = (o.prices.recurring as Record<string, number> | null)?.[cycle];
    return [
      `${o.name}${o.held ? " (held)" : ""}`,
      recurring === undefined ? "—" : money(recurring, cur),
      o.prices.one_time === null ? "—" : money(o.prices.one_time, cur),
    ];
  }),
  "",
)}`
      : html`<h2>Buy an add-on</h2><p class="empty">${offers.refused ?? "No add-on is offered for this service."}</p>`
}`;
    kit.render(res, `Add-ons of ${s.hostname || s.name}`, body, await doneOf(kit, req, res));
  });
  const addonsOf = (req: Request) => `${svcBase(String(req.params.id))}/addons`;
  action(kit, router, ACT.buyAddon, { back: addonsOf }, async (req, _res, api, token) => {
    // The form's fields as typed, for the API's own schema: digits are the number it reads,
    // anything else goes as it is for the API to refuse in its words (parseInt would read "1e3"
    // and "1.5" as 1); a field the form did not send is left out, so only the API's defaults apply.
    const typed = bodyText(req, "quantity").trim();
    const quantity = /^\d{1,9}$/.test(typed) ? Number(typed) : typed;
    const r = await api<{ settled: boolean; credit_balance: number }>(OPS.buyAddon, {
      params: { id: String(req.params.id) },
      body: {
        optionId: bodyText(req, "optionId"),
        ...(req.body?.billingType === undefined ? {} : { billingType: bodyText(req, "billingType") }),
        ...(bodyText(req, "billingCycle") ? { billingCycle: bodyText(req, "billingCycle") } : {}),
        ...(req.body?.quantity === undefined ? {} : { quantity }),
      },
      token,
    });
    return {
      location: addonsOf(req),
      notice: r.data.settled
        ? "The add-on is bought and paid from your credit."
        : "The add-on is ordered; pay its invoice to activate it.",
    };
  });
  page(kit, router, "/services/:id/addons/:optionId/give-up", async (req, res, api) => {
    const s = await detailOf(api, String(req.params.id));
    kit.render(
      res,
      "Give up the add-on",
      html`${serviceTabs(res, s, "")}${
        may(sessionOf(res), ACT.giveUpAddon)
          ? html`<p class="warning"><strong>The add-on ends now.</strong> The unused share of what you paid is returned to your credit.</p>
<form method="post" action="${addonsOf(req)}/${String(req.params.optionId)}/give-up">${formTokens(sessionOf(res).csrfToken)}
<button type="submit" class="danger">Give up the add-on</button> <a href="${addonsOf(req)}">Keep it</a></form>`
          : notYours("Giving up an add-on")
      }`,
    );
  });
  action(kit, router, ACT.giveUpAddon, { back: addonsOf }, async (req, res, api, token) => {
    const r = await api<{ credit: number }>(OPS.giveUpAddon, {
      params: { id: String(req.params.id), optionId: String(req.params.optionId) },
      token,
    });
    return {
      location: addonsOf(req),
      notice: `The add-on is given up; ${money(r.data.credit, sessionOf(res).currency)} returned to your credit.`,
    };
  });
}

/** The billing cycles any offered add-on has a recurring price for. */
const cyclesOf = (offers: readonly { prices: { recurring: unknown } }[]) => [
  ...new Set(offers.flatMap((o) => Object.keys((o.prices.recurring as Record<string, number> | null) ?? {}))),
];
