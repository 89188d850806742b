/**
 * A customer's money in the admin panel: invoices and proformas, balances and transactions, and
 * the credit adjustment (billing's DeskAdjustCredit, keyed by its audit id).
 */
import type { Document } from "@hb/contracts/hb/billing/v1/documents_pb";
import { TransactionKindSchema } from "@hb/contracts/hb/billing/v1/ledger_pb";
import { enumWord, resolveError } from "@hb/platform";
import { readMoney } from "@hb/platform/money";
import type { Request, Response, Router } from "express";
import { allowed } from "./admin-actions.ts";
import {
  amount,
  CURRENT,
  type CustomerShell,
  documentState,
  pageOf,
  pager,
  table,
  word,
} from "./admin-customer-view.ts";
import type { AdminDeps } from "./admin-page.ts";
import { day, when } from "./format.ts";
import { emptyForm, type FormState, field, formErrors, formFields, generalError } from "./forms.ts";
import { type Html, html } from "./html.ts";
import { sessionOf } from "./session.ts";
import { OutcomeUnknown, settleMoneyWrite } from "./staff-audit.ts";

export function customerMoneyRoutes(router: Router, d: AdminDeps, shell: CustomerShell) {
  const { clients, needs, act } = d;
  const { load, show, done, back } = shell;

  // Invoices and proformas -------------------------------------------------------------------
  router.get(
    "/customers/:id/documents",
    needs("view_clients", CURRENT, async (req, res) => {
      const inv = pageOf(req.query.invoices_page);
      const pro = pageOf(req.query.proformas_page);
      const [r, b] = await Promise.all([
        load(req, res),
        clients.billing.deskGetCustomerBilling({
          customerId: String(req.params.id),
          invoicesPage: inv,
          proformasPage: pro,
        }),
      ]);
      if (!r) return;
      const c = r.customer!;
      const base = `/admin/customers/${c.id}/documents`;
      const docs = (label: string, list: Document[]) =>
        list.length === 0
          ? html`<p class="empty">No ${label.toLowerCase()}.</p>`
          : table(
              label,
              ["Number", "Status", "For", "Total", "Paid", "Due", "Created", "Due date"],
              list.map(
                (x) => html`<tr><td class="mono">${x.number}</td><td>${documentState(x)}</td>
<td>${documentFor(c.id, x)}</td>
<td>${amount(x.total)}</td><td>${amount(x.amountPaid)}</td><td>${amount(x.amountDue)}</td><td>${when(x.createdAt)}</td><td>${day(x.dueDate)}</td></tr>`,
              ),
            );
      const content = html`<h2>Invoices</h2>
<p>${b.invoicesTotal} ${b.invoicesTotal === 1 ? "invoice" : "invoices"}.</p>
${docs("Invoices", b.invoices)}
${pager(base, "invoices_page", inv, b.invoicesTotal, { proformas_page: String(pro) })}
<h2>Proformas</h2>
<p>${b.proformasTotal} ${b.proformasTotal === 1 ? "proforma" : "proformas"}.</p>
${docs("Proformas", b.proformas)}
${pager(base, "proformas_page", pro, b.proformasTotal, { invoices_page: String(inv) })}`;
      show(res, c, "documents", content, { notice: done(req) });
    }),
  );

  // Balance and transactions ------------------------------------------------------------------
  async function balanceTab(
    req: Request,
    res: Response,
    o: { f?: FormState; code?: number; refused?: { amount: string; reason: string } } = {},
  ) {
    const page = pageOf(req.query.transactions_page);
    const [r, b, staff] = await Promise.all([
      load(req, res),
      clients.billing.deskGetCustomerBilling({ customerId: String(req.params.id), transactionsPage: page }),
      clients.portal.listStaff({}),
    ]);
    if (!r) return;
    const c = r.customer!;
    const people = new Map(r.people.map((p) => [p.id, p.name]));
    const staffNames = new Map(staff.staff.map((s) => [s.id, s.name]));
    const owner = r.people.find((p) => p.isOwner);
    const f = o.f ?? emptyForm({ person: owner?.id ?? "" });
    const csrf = sessionOf(res).csrfToken;
    const content = html`<h2>Balances</h2>
${
  b.balances.length === 0
    ? html`<p class="empty">No one in this account has held credit yet (0 ${c.currency}).</p>`
    : table(
        "Balances",
        ["Person", "Balance"],
        b.balances.map(
          (x) => html`<tr><td>${people.get(x.personId) ?? x.personId}</td><td>${amount(x.balance)}</td></tr>`,
        ),
      )
}
${
  allowed(res, "credit.adjust")
    ? html`<h2>Adjust credit</h2>
<p>A positive amount adds credit, a negative one takes it back; a debit never takes a balance below zero. The reason is the transaction's description, which the customer sees, and your name is kept with it.</p>
${
  o.refused
    ? html`<p class="notice" id="refused-credit">Not done: ${o.refused.amount || "(no amount)"} ${c.currency}, reason “${o.refused.reason || "(none)"}”. The form starts empty, so the next adjustment carries nothing of this one.</p>`
    : ""
}
<form method="post" action="/admin/customers/${c.id}/credit" novalidate>
${formFields(csrf)}
${generalError(f)}
<div class="field${f.errors.person ? " invalid" : ""}"><label for="f-person">Whose balance</label>
<select id="f-person" name="person"${f.errors.person ? html` aria-invalid="true" aria-describedby="f-person-error"` : ""}>${r.people.map(
        (p) =>
          html`<option value="${p.id}"${f.values.person === p.id ? html` selected` : ""}>${p.name}${p.isOwner ? " (owner)" : ""}</option>`,
      )}</select>${f.errors.person ? html`<p class="error" id="f-person-error">${f.errors.person}</p>` : ""}</div>
${field(f, "amount", `Amount (${c.currency})`, { required: true, hint: "e.g. 25 or -5.50" })}
${field(f, "reason", "Reason", { required: true, multiline: true })}
<button type="submit">Adjust credit</button>
</form>`
    : ""
}
<h2>Transactions</h2>
<p>${b.transactionsTotal} ${b.transactionsTotal === 1 ? "transaction" : "transactions"}.</p>
${
  b.transactions.length === 0
    ? html`<p class="empty">No transactions.</p>`
    : table(
        "Transactions",
        ["When", "Person", "Kind", "Amount", "Balance after", "Description", "By staff"],
        b.transactions.map(({ transaction: t, personId, staffId }) => {
          return html`<tr><td>${when(t?.createdAt)}</td><td>${people.get(personId) ?? personId}</td><td>${word(enumWord(TransactionKindSchema, t?.kind ?? 0))}</td>
<td>${amount(t?.amount)}</td><td>${amount(t?.balanceAfter)}</td><td>${t?.description ?? ""}</td><td>${staffId ? (staffNames.get(staffId) ?? staffId) : "—"}</td></tr>`;
        }),
      )
}
${pager(`/admin/customers/${c.id}/balance`, "transactions_page", page, b.transactionsTotal)}`;
    show(res, c, "balance", content, { notice: done(req), status: o.code });
  }

  router.get(
    "/customers/:id/balance",
    needs("view_clients", CURRENT, (req, res) => balanceTab(req, res)),
  );

  act("credit.adjust", async (req, res, body, audited) => {
    const customerId = String(req.params.id);
    const values = {
      person: body.person,
      amount: body.amount.trim(),
      reason: body.reason,
    };
    const errors: Record<string, string> = {};
    const read = readMoney(values.amount);
    if (!read.ok || read.units === 0n)
      errors.amount = "Enter a non-zero amount with at most 4 decimals, e.g. 25 or -5.50";
    if (!values.reason.trim()) errors.reason = "Say why the balance changes";
    // A refused adjustment is named above the form, never left in it: a different adjustment typed
    // next would otherwise carry its reason (a refused -100000 "refund" once became a +5 "refund").
    const refused = { amount: values.amount, reason: values.reason.trim() };
    const cleared = { person: values.person };
    if (Object.keys(errors).length)
      return balanceTab(req, res, { f: { values: cleared, errors }, code: 400, refused });
    try {
      await audited(
        res,
        {
          action: "credit.adjust",
          customerId,
          target: values.person,
          after: { amount: values.amount },
          reason: values.reason.trim(),
          settle: settleMoneyWrite(clients),
        },
        (auditId) =>
          clients.billing.deskAdjustCredit({
            customerId,
            personId: values.person,
            staffId: sessionOf(res).subjectId,
            amount: values.amount,
            reason: values.reason,
            // The audit entry's id: billing credits once per key, and settles a lost answer by it.
            idempotencyKey: auditId,
          }),
        (r) => ({
          after: {
            amount: values.amount,
            balance: r.balance?.amount ?? "",
            transaction_id: String(r.transactionId),
          },
        }),
      );
      back(res, customerId, "balance", "credit");
    } catch (err) {
      if (err instanceof OutcomeUnknown) {
        // Kept on the page (not in the form, which comes back empty): sending it again is a new write.
        return balanceTab(req, res, { f: { values: {}, errors: {}, general: err.message }, code: 503 });
      }
      await balanceTab(req, res, {
        f: formErrors(err, cleared, { person_id: "person" }),
        code: resolveError(err).status,
        refused,
      });
    }
  });
}

/** What a document bills, for staff: its service by hostname (its staff page) and its order by number. */
function documentFor(customerId: string, x: Document): Html | string {
  const service = x.serviceId
    ? html`<a href="/admin/customers/${customerId}/services/${x.serviceId}">${x.serviceHostname || x.serviceId}</a>`
    : "";
  const order = x.orderNumber ? html`<span class="mono">${x.orderNumber}</span>` : "";
  return service || order ? html`${service}${service && order ? " · " : ""}${order}` : "—";
}
