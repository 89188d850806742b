import {
  CardDisputeFunds,
  type CardPayment,
  CardPaymentFilter,
  type PaymentEvent,
  PaymentEventOutcomeSchema,
} from "@hb/contracts/hb/billing/v1/payments_pb";
import { enumWord, PAGE_SIZE } from "@hb/platform";
import type { Request, Response, Router } from "express";
import type { PageClients } from "../clients.ts";
import type { AdminNeeds, AdminRender } from "./admin-page.ts";
import { money } from "./customer/ui.ts";
import { when } from "./format.ts";
import { type Html, html } from "./html.ts";

const CURRENT = "/admin/card-payments";
const FILTERS = {
  all: { filter: CardPaymentFilter.UNSPECIFIED, label: "Refunded, disputed or short" },
  disputed: { filter: CardPaymentFilter.DISPUTED, label: "Disputed" },
  refunded: { filter: CardPaymentFilter.REFUNDED, label: "Refunded" },
  shortfall: { filter: CardPaymentFilter.SHORTFALL, label: "With a shortfall" },
} as const;
type Shown = keyof typeof FILTERS;

const FUNDS: Record<CardDisputeFunds, string> = {
  [CardDisputeFunds.UNSPECIFIED]: "",
  [CardDisputeFunds.NOT_WITHDRAWN]: "funds not withdrawn",
  [CardDisputeFunds.WITHDRAWN]: "funds withdrawn",
  [CardDisputeFunds.REINSTATED]: "funds reinstated",
};

const pageOf = (v: unknown) => Math.max(1, Number.parseInt(String(v ?? "1"), 10) || 1);
const hasAmount = (m: { amount: string } | undefined) => m !== undefined && !/^0(\.0*)?$/.test(m.amount);

/**
 * Card payments in the admin panel (view clients): top-ups a person should look at (refunded,
 * disputed, or with a shortfall: money the card provider took back that was no longer on the
 * balance), and the provider's events billing could not apply by itself (unmatched: no top-up has
 * the payment; flagged: paid in another currency than the top-up's). It only shows: refunds and
 * disputes are answered in the provider's dashboard, and the money follows them by itself.
 */
export function cardPaymentRoutes(
  router: Router,
  clients: PageClients,
  render: AdminRender,
  needs: AdminNeeds,
) {
  async function show(req: Request, res: Response) {
    const shown: Shown =
      typeof req.query.show === "string" && req.query.show in FILTERS ? (req.query.show as Shown) : "all";
    const pageNo = pageOf(req.query.page);
    const eventsPage = pageOf(req.query.events);
    // Three calls whatever the page's length: the payments, the events, every customer's name.
    const [payments, events, { customers }] = await Promise.all([
      clients.topUps.listCardPayments({
        filter: FILTERS[shown].filter,
        page: pageNo,
        limit: PAGE_SIZE.staff,
      }),
      clients.topUps.listPaymentEvents({ page: eventsPage, limit: PAGE_SIZE.staff }),
      clients.auth.listCustomers({ email: "" }),
    ]);
    const names = new Map(customers.map((c) => [c.id, c.company ? `${c.name} (${c.company})` : c.name]));
    const customer = (id: string) =>
      id
        ? html`<a href="/admin/customers/${id}">${names.get(id) ?? id}</a>`
        : html`<span class="hint">none found</span>`;
    const link = (p: number, e: number) =>
      `${CURRENT}?${new URLSearchParams({ show: shown, page: String(p), events: String(e) })}`;

    const payment = (p: CardPayment) => {
      const t = p.topUp;
      const cur = t?.requested?.currency;
      return html`<tr><td>${customer(t?.customerId ?? "")}</td>
<td>${t?.received ? money(t.received.amount, cur) : html`${money(t?.requested?.amount, cur)} <span class="hint">(not credited)</span>`}<br><span class="hint">${when(t?.createdAt)}</span></td>
<td>${t?.refunded ? money(t.refunded.amount, cur) : "—"}</td>
<td>${
        p.disputes.length
          ? p.disputes.map(
              (d) =>
                html`<p><span class="mono">${d.id}</span>: ${d.status}, ${FUNDS[d.funds]} (${money(d.amount?.amount, cur)}${d.funds === CardDisputeFunds.WITHDRAWN ? html`; taken back ${money(d.taken?.amount, cur)}` : ""})</p>`,
            )
          : "—"
      }</td>
<td>${hasAmount(p.shortfall) ? html`<strong>${money(p.shortfall?.amount, cur)}</strong>` : "—"}</td></tr>`;
    };
    const event = (e: PaymentEvent) =>
      html`<tr><td>${when(e.receivedAt)}</td><td>${enumWord(PaymentEventOutcomeSchema, e.outcome)}</td><td class="mono">${e.type}</td>
<td>${e.detail}</td><td>${customer(e.customerId)}</td><td class="mono">${e.eventId}</td></tr>`;
    const pager = (total: number, at: number, to: (n: number) => string, label: string): Html => {
      const pages = Math.max(1, Math.ceil(total / PAGE_SIZE.staff));
      return pages > 1
        ? html`<nav class="pager" aria-label="${label}">${at > 1 ? html`<a href="${to(at - 1)}" rel="prev">Previous page</a>` : ""}<span>Page ${at} of ${pages}</span>${at < pages ? html`<a href="${to(at + 1)}" rel="next">Next page</a>` : ""}</nav>`
        : html``;
    };

    const body = html`<p>Card top-ups refunded or disputed in the card processor's dashboard. The credit follows the money by itself: a refund or a dispute's withdrawn funds are taken back from the customer's balance, never below zero; what had already been spent is the <strong>shortfall</strong>, owed by the customer. A won dispute gives back what was taken.</p>
<form method="get" action="${CURRENT}" class="filters" aria-label="Filter the card payments">
<div class="field"><label for="cp-show">Show</label><select id="cp-show" name="show">${(
      Object.keys(FILTERS) as Shown[]
    ).map(
      (k) => html`<option value="${k}"${k === shown ? html` selected` : ""}>${FILTERS[k].label}</option>`,
    )}</select></div>
<button type="submit">Show</button></form>
${
  payments.payments.length === 0
    ? html`<p class="empty">No card payments to show.</p>`
    : html`<div class="table-wrap" role="region" aria-label="Card payments" tabindex="0"><table>
<caption class="sr">Card payments</caption>
<thead><tr><th scope="col">Customer</th><th scope="col">Paid</th><th scope="col">Refunded</th><th scope="col">Disputes</th><th scope="col">Shortfall</th></tr></thead>
<tbody>${payments.payments.map(payment)}</tbody></table></div>`
}
${pager(payments.total, pageNo, (n) => link(n, eventsPage), "Pages of card payments")}
<h2 id="events">Events for a person</h2>
<p>Events the card processor sent that billing could not apply by itself: <strong>flagged</strong> (for example paid in another currency than the top-up's: nothing was credited) or <strong>unmatched</strong> (no top-up has the payment). Settle them in the processor's dashboard (refund) or credit the customer by hand.</p>
${
  events.events.length === 0
    ? html`<p class="empty">No events wait for a person.</p>`
    : html`<div class="table-wrap" role="region" aria-label="Events for a person" tabindex="0"><table>
<caption class="sr">Events for a person</caption>
<thead><tr><th scope="col">Received</th><th scope="col">Outcome</th><th scope="col">Type</th><th scope="col">Detail</th><th scope="col">Customer</th><th scope="col">Event</th></tr></thead>
<tbody>${events.events.map(event)}</tbody></table></div>`
}
${pager(events.total, eventsPage, (n) => `${link(pageNo, n)}#events`, "Pages of events")}`;
    render(res, "Card payments", body, { current: CURRENT });
  }

  router.get("/card-payments", needs("view_clients", CURRENT, show));
}
