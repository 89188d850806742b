import { formatMoney, parseMoney } from "@hb/platform/money";
import { PAGE_SIZE } from "@hb/platform/paging";
import type { Router } from "express";
import type { z } from "zod";
import type { account, accountBalance, accountUsage } from "../../wire/account.ts";
import type { invoice } from "../../wire/invoice.ts";
import type { transactionList } from "../../wire/transaction.ts";
import { html } from "../html.ts";
import { sessionOf } from "../session.ts";
import { operation, type PageApi, Refused } from "./api.ts";
import { action, bodyText, doneOf, type Kit, page } from "./kit.ts";
import { documentFor, documentStatus, oneCharge, orderLink, serviceLink } from "./names.ts";
import { may, pageAction } from "./page-table.ts";
import { at, buttonForm, facts, formTokens, money, pageParam, pager, table } from "./ui.ts";

type Doc = z.infer<typeof invoice> & { items?: { description: string; amount: string }[] };

const OPS = {
  account: operation("GET", "/account", "/portal/balance"),
  balance: operation("GET", "/account/balance", "/portal/balance"),
  usage: operation("GET", "/account/usage", "/portal/balance"),
  transactions: operation("GET", "/account/transactions", "/portal/balance"),
  invoices: operation("GET", "/invoices", "/portal/invoices"),
  invoice: operation("GET", "/invoices/:id", "/portal/invoices/:id"),
  payInvoice: operation("POST", "/invoices/:id/pay", "/portal/invoices/:id"),
  proformas: operation("GET", "/proformas", "/portal/proformas"),
  proforma: operation("GET", "/proformas/:id", "/portal/proformas/:id"),
  payProforma: operation("POST", "/proformas/:id/pay", "/portal/proformas/:id"),
};

const DOC_STATES = ["unpaid", "paid", "cancelled"];
const kinds = {
  invoices: {
    list: OPS.invoices,
    one: OPS.invoice,
    pay: pageAction({ path: "/invoices/:id/pay", ops: [OPS.payInvoice], redirect: "/portal/invoices/:id" }),
    title: "Invoices",
    single: "Invoice",
  },
  proformas: {
    list: OPS.proformas,
    one: OPS.proforma,
    pay: pageAction({
      path: "/proformas/:id/pay",
      ops: [OPS.payProforma],
      redirect: "/portal/proformas/:id",
    }),
    title: "Proformas",
    single: "Proforma",
  },
} as const;

/** Balance and transactions, invoices and proformas, and paying them from credit. */
export function documentRoutes(kit: Kit, router: Router): void {
  page(kit, router, "/balance", async (req, res, api) => {
    const [acct, bal, usage, tx] = await Promise.all([
      api<z.infer<typeof account>>(OPS.account),
      api<z.infer<typeof accountBalance>>(OPS.balance),
      api<z.infer<typeof accountUsage>>(OPS.usage),
      api<z.infer<typeof transactionList>>(OPS.transactions, {
        query: { page: pageParam(req.query.page), limit: PAGE_SIZE.default },
      }),
    ]);
    const cur = bal.data.currency;
    const body = html`${facts([
      ["Account", `${acct.data.name}${acct.data.company ? ` (${acct.data.company})` : ""}`],
      ["Credit balance", html`<strong>${money(bal.data.balance, cur)}</strong>`],
      ["Recurring per month", money(usage.data.recurring_monthly_amount, cur)],
      [
        "Unpaid invoices",
        `${usage.data.unpaid_invoices.count} (${money(usage.data.unpaid_invoices.total, cur)})`,
      ],
      ["Paid this month", money(usage.data.paid_this_month, cur)],
      ["Hourly charges this month", money(usage.data.hourly_charges_this_month, cur)],
    ])}
<p><a href="/portal/add-credit">Add credit</a>: the page says which ways to pay are open.</p>
<h2>Transactions</h2>
${table(
  "Transactions",
  ["When", "Type", "Amount", "Balance after", "Description"],
  tx.data.transactions.map((t) => [
    at(t.created_at),
    t.type.replaceAll("_", " "),
    money(t.amount, cur),
    money(t.balance_after, cur),
    t.document_id ? html`<a href="/portal/invoices/${t.document_id}">${t.description}</a>` : t.description,
  ]),
  "No transactions yet.",
)}
${pager("/portal/balance", tx.data.pagination)}`;
    kit.render(res, "Balance and transactions", body, await doneOf(kit, req, res));
  });

  for (const [plural, k] of Object.entries(kinds)) {
    page(kit, router, `/${plural}`, async (req, res, api) => {
      const status =
        typeof req.query.status === "string" && DOC_STATES.includes(req.query.status) ? req.query.status : "";
      const r = await api<Record<string, unknown>>(k.list, {
        query: { page: pageParam(req.query.page), limit: PAGE_SIZE.default, status },
      });
      const docs = (r.data[plural] ?? []) as Doc[];
      const body = html`<form method="get" action="/portal/${plural}" class="filters">
<div class="field"><label for="f-status">Status</label><select id="f-status" name="status"><option value="">Any status</option>${DOC_STATES.map((s) => html`<option value="${s}"${s === status ? html` selected` : ""}>${s}</option>`)}</select></div>
<button type="submit">Filter</button></form>
${table(
  k.title,
  ["Number", "Status", "Total", "Due", "For", "Created"],
  docs.map((d) => [
    html`<a href="/portal/${plural}/${d.id}">${d.number}</a>`,
    documentStatus(d),
    money(d.total, d.currency),
    money(d.amount_due, d.currency),
    documentFor(d),
    at(d.created_at).slice(0, 10),
  ]),
  status ? `No ${plural} with this status.` : `No ${plural} yet.`,
)}
${pager(`/portal/${plural}`, r.data.pagination as { page: number; limit: number; total: number }, status ? { status } : {})}`;
      kit.render(res, k.title, body, await doneOf(kit, req, res));
    });
    page(kit, router, `/${plural}/:id`, async (req, res, api) => {
      const d = (await api<Doc>(k.one, { params: { id: String(req.params.id) } })).data;
      const body = html`${facts([
        ["Status", documentStatus(d)],
        ["Total", money(d.total, d.currency)],
        ["Paid", money(d.amount_paid, d.currency)],
        ["Due", money(d.amount_due, d.currency)],
        ["Purpose", d.purpose],
        ["Created", at(d.created_at)],
        ["Due date", at(d.due_date)],
        ["Paid at", at(d.paid_at)],
        ["Order", d.order_id ? orderLink(d.order_id, d.order_number) : undefined],
        ["Service", d.service_id ? serviceLink(d.service_id, d.service_hostname) : undefined],
      ])}
${oneCharge(d)}
${
  d.items?.length
    ? table(
        "Lines",
        ["Description", "Amount"],
        d.items.map((i) => [i.description, money(i.amount, d.currency)]),
        "",
      )
    : ""
}
${d.status === "unpaid" && may(sessionOf(res), k.pay) ? payFromCredit(`/portal/${plural}/${d.id}/pay`, d, await balanceOf(api), sessionOf(res).csrfToken) : ""}
<p><a href="/portal/${plural}">All ${plural}</a></p>`;
      kit.render(res, `${k.single} ${d.number}`, body, await doneOf(kit, req, res));
    });
    action(
      kit,
      router,
      k.pay,
      { back: (req) => `/portal/${plural}/${String(req.params.id)}` },
      async (req, res, api, token) => {
        // An amount pays part (the API's rule: up to what is due and what the balance holds); no
        // amount pays what is due.
        const amount = bodyText(req, "amount").trim();
        const r = await api<{ creditApplied: number; remainingAmount: number; newBalance: number }>(
          k.pay.ops[0],
          {
            params: { id: String(req.params.id) },
            body: amount ? { amount } : {},
            token,
          },
        );
        const cur = sessionOf(res).currency;
        return {
          location: `/portal/${plural}/${String(req.params.id)}`,
          notice:
            r.data.remainingAmount > 0
              ? `${money(r.data.creditApplied, cur)} paid from credit; ${money(r.data.remainingAmount, cur)} is still due. Your balance is now ${money(r.data.newBalance, cur)}.`
              : `Paid from credit; your balance is now ${money(r.data.newBalance, cur)}.`,
        };
      },
    );
  }
}

/** The credit balance, when the person may read it (a member without view_billing pays blind). */
async function balanceOf(api: PageApi): Promise<{ balance: string; currency: string } | undefined> {
  try {
    const b = (await api<z.infer<typeof accountBalance>>(OPS.balance)).data;
    return { balance: String(b.balance), currency: b.currency };
  } catch (err) {
    if (err instanceof Refused) return undefined;
    throw err;
  }
}

/**
 * How an unpaid document is paid from credit. A balance that covers what is due pays it in one
 * click. A short one says what is missing, links to Add credit with that amount, and offers to pay
 * part now, as the API allows (POST …/pay with an amount).
 */
function payFromCredit(
  action: string,
  d: Doc,
  bal: { balance: string; currency: string } | undefined,
  csrf: string,
) {
  const due = parseMoney(String(d.amount_due)) ?? 0n;
  const balance = bal ? parseMoney(bal.balance) : undefined;
  const full = html`${buttonForm(action, "Pay from credit", csrf)}`;
  if (balance !== undefined && balance >= due) {
    return html`<h2>Pay</h2><p>Pays ${money(d.amount_due, d.currency)} from your credit balance of ${money(bal?.balance, d.currency)}.</p>${full}`;
  }
  const partForm = (
    value: string,
  ) => html`<form method="post" action="${action}" novalidate>${formTokens(csrf)}
<div class="field"><label for="f-amount">Amount to pay now (${d.currency})</label>
<p class="hint" id="f-amount-hint">Up to ${money(d.amount_due, d.currency)}; the rest stays due on this document.</p>
<input id="f-amount" name="amount" inputmode="decimal" aria-describedby="f-amount-hint" value="${value}"></div>
<button type="submit">Pay part from credit</button></form>`;
  if (balance === undefined) {
    return html`<h2>Pay</h2><p>Pays ${money(d.amount_due, d.currency)} from your credit balance.</p>${full}
<h3>Pay part</h3>${partForm("")}`;
  }
  const missing = formatMoney(due - balance);
  return html`<h2>Pay</h2>
<p>Your credit balance is ${money(bal?.balance, d.currency)}: <strong>${money(missing, d.currency)} short</strong> of the ${money(d.amount_due, d.currency)} due.</p>
<p><a href="/portal/add-credit?amount=${money(missing)}" id="add-missing-credit">Add ${money(missing, d.currency)} of credit</a>, then pay in full${balance > 0n ? ", or pay part now:" : "."}</p>
${balance > 0n ? partForm(money(formatMoney(balance))) : ""}`;
}
