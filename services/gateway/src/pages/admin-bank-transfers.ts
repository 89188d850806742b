import { type TopUp, TopUpStatus, TopUpStatusSchema } from "@hb/contracts/hb/billing/v1/payments_pb";
import { apiError, enumWord, PAGE_SIZE, resolveError } from "@hb/platform";
import type { Request, Response, Router } from "express";
import { allowed, allowedStronger } from "./admin-actions.ts";
import type { AdminDeps } from "./admin-page.ts";
import { money } from "./customer/ui.ts";
import { when } from "./format.ts";
import { formFields } from "./forms.ts";
import { html } from "./html.ts";
import { sessionOf } from "./session.ts";
import { OutcomeUnknown, settleMoneyWrite } from "./staff-audit.ts";

const CURRENT = "/admin/bank-transfers";
const STATUSES = {
  pending: TopUpStatus.PENDING,
  credited: TopUpStatus.CREDITED,
  all: TopUpStatus.UNSPECIFIED,
};
type Shown = keyof typeof STATUSES;
const REFERENCE = /^HB-[0-9A-Z]{4}-[0-9A-Z]{4}$/;

/** A refusal of the form itself, shown beside the amount (nothing was sent to billing). */
const formRefusal = (message: string, status = 400) =>
  apiError(status === 403 ? "FORBIDDEN" : "BAD_REQUEST", message, {
    violations: [{ field: "received_amount", message }],
  });

/**
 * Bank transfers in the admin panel: the customers' requested transfers with their references
 * (pending first, oldest first, the order a bank statement is worked through), and for staff who
 * may edit clients a form per pending transfer to confirm the amount that arrived. Billing credits
 * it once (a second or concurrent confirmation is refused 409) and records the staff member. More
 * than was asked is credited only when staff holding Approve overpayments tick the override.
 */
export function bankTransferRoutes(router: Router, d: AdminDeps) {
  const { clients, render, needs, act } = d;
  async function listPage(
    req: Request,
    res: Response,
    o: {
      notice?: string;
      error?: { reference: string; message: string; value: string };
      status?: number;
    } = {},
  ) {
    const shown: Shown =
      req.query.status === "credited" || req.query.status === "all" ? req.query.status : "pending";
    const pageNo = Math.max(1, Number.parseInt(String(req.query.page ?? "1"), 10) || 1);
    // Two calls whatever the page's length: the transfers, and every customer's name at once.
    const [list, { customers }] = await Promise.all([
      clients.topUps.listBankTransfers({ status: STATUSES[shown], page: pageNo, limit: PAGE_SIZE.staff }),
      clients.auth.listCustomers({ email: "" }),
    ]);
    const names = new Map(customers.map((c) => [c.id, c.company ? `${c.name} (${c.company})` : c.name]));
    const edit = allowed(res, "billing.bank_transfer_confirm");
    const csrf = sessionOf(res).csrfToken;
    const pages = Math.max(1, Math.ceil(list.total / PAGE_SIZE.staff));
    const link = (n: number) => `${CURRENT}?${new URLSearchParams({ status: shown, page: String(n) })}`;
    const overpay = allowedStronger(res, "billing.bank_transfer_confirm");
    // The amount is typed from the bank statement, never filled in with what was asked: a default
    // confirms the asked amount whatever arrived.
    const confirmForm = (t: TopUp) => {
      const id = `received-${t.id}`;
      const err = o.error?.reference === t.reference ? o.error : undefined;
      return html`<form method="post" action="${CURRENT}/confirm" class="inline-form" novalidate>${formFields(csrf)}
<input type="hidden" name="reference" value="${t.reference}">
<div class="field${err ? " invalid" : ""}"><label for="${id}">Amount received for ${t.reference} (${t.requested?.currency ?? ""})</label>
<input id="${id}" name="received" inputmode="decimal" required value="${err ? err.value : ""}" aria-describedby="${id}-hint${err ? ` ${id}-error` : ""}"${err ? html` aria-invalid="true"` : ""}>
<p class="hint" id="${id}-hint">As the bank statement shows it; ${money(t.requested?.amount, t.requested?.currency)} was asked.</p>
${err ? html`<p class="error" id="${id}-error">${err.message}</p>` : ""}</div>
${overpay ? html`<div class="field"><label><input type="checkbox" name="above_requested" value="1"> More than asked arrived: credit it all</label></div>` : ""}
<button type="submit">Confirm received</button></form>`;
    };
    const body = html`<p>Customers ask for a transfer in the portal and quote its reference. When the money is on the bank statement, confirm the amount that arrived: it is credited once to the person who asked, and your name is recorded on the ledger entry.</p>
<form method="get" action="${CURRENT}" class="filters" aria-label="Filter the transfers">
<div class="field"><label for="bt-status">Show</label><select id="bt-status" name="status">${(
      ["pending", "credited", "all"] as const
    ).map(
      (s) =>
        html`<option value="${s}"${s === shown ? html` selected` : ""}>${s === "all" ? "All transfers" : s === "pending" ? "Waiting for money" : "Credited"}</option>`,
    )}</select></div>
<button type="submit">Show</button></form>
${o.error && !list.transfers.some((t) => t.reference === o.error?.reference) ? html`<p class="error" role="alert" id="form-error">${o.error.message}</p>` : ""}
${
  list.transfers.length === 0
    ? html`<p class="empty">${shown === "pending" ? "No transfers are waiting for money." : "No transfers yet."}</p>`
    : html`<div class="table-wrap" role="region" aria-label="Bank transfers" tabindex="0"><table>
<caption class="sr">Bank transfers</caption>
<thead><tr><th scope="col">Reference</th><th scope="col">Customer</th><th scope="col">Asked</th><th scope="col">Requested on</th><th scope="col">Status</th><th scope="col">Received</th>${edit ? html`<th scope="col">Confirm</th>` : ""}</tr></thead>
<tbody>${list.transfers.map(
        (t) => html`<tr><td class="mono">${t.reference}</td>
<td><a href="/admin/customers/${t.customerId}">${names.get(t.customerId) ?? t.customerId}</a></td>
<td>${money(t.requested?.amount, t.requested?.currency)}</td><td>${when(t.createdAt)}</td>
<td>${t.status === TopUpStatus.PENDING ? "waiting" : enumWord(TopUpStatusSchema, t.status)}</td>
<td>${t.received ? html`${money(t.received.amount, t.received.currency)}<br><span class="hint">${when(t.creditedAt)}</span>` : "—"}</td>
${edit ? html`<td>${t.status === TopUpStatus.PENDING ? confirmForm(t) : ""}</td>` : ""}</tr>`,
      )}</tbody></table></div>`
}
${pages > 1 ? html`<nav class="pager" aria-label="Pages">${pageNo > 1 ? html`<a href="${link(pageNo - 1)}" rel="prev">Previous page</a>` : ""}<span>Page ${pageNo} of ${pages}</span>${pageNo < pages ? html`<a href="${link(pageNo + 1)}" rel="next">Next page</a>` : ""}</nav>` : ""}`;
    render(res, "Bank transfers", body, { notice: o.notice, status: o.status, current: CURRENT });
  }

  router.get(
    "/bank-transfers",
    needs("view_clients", CURRENT, async (req, res) => {
      const confirmed = typeof req.query.confirmed === "string" && REFERENCE.test(req.query.confirmed);
      await listPage(
        req,
        res,
        confirmed ? { notice: `Transfer ${req.query.confirmed} confirmed and credited.` } : {},
      );
    }),
  );

  act("billing.bank_transfer_confirm", async (req, res, body, audited) => {
    const reference = body.reference;
    const received = body.received.trim();
    const aboveRequested = body.above_requested === "1";
    try {
      if (!received) throw formRefusal("Enter the amount the bank statement shows");
      // Crediting more than was asked needs the stronger permission, checked before anything is written.
      if (aboveRequested && !allowedStronger(res, "billing.bank_transfer_confirm"))
        throw formRefusal(
          "Crediting more than was asked needs the staff permission Approve overpayments",
          403,
        );
      // The audit row is filed under the transfer's customer, which billing answers (or the
      // settled entry names): never under a customer the form names.
      const r = await audited(
        res,
        {
          action: "billing.bank_transfer_confirm",
          target: reference,
          before: { status: "pending" },
          after: { received, ...(aboveRequested ? { above_requested: true } : {}) },
          settle: settleMoneyWrite(clients),
        },
        (auditId) =>
          clients.topUps.confirmBankTransfer({
            reference,
            receivedAmount: received,
            staffId: sessionOf(res).subjectId,
            aboveRequested,
            idempotencyKey: auditId,
          }),
        (r) => ({
          after: { received: r.topUp?.received?.amount, balance: r.balance },
          customerId: r.topUp?.customerId,
        }),
      );
      res.redirect(303, `${CURRENT}?${new URLSearchParams({ confirmed: r.topUp?.reference ?? "" })}`);
    } catch (err) {
      if (err instanceof OutcomeUnknown) {
        return listPage(req, res, { error: { reference, message: err.message, value: "" }, status: 503 });
      }
      const e = resolveError(err);
      if (e.status >= 500) throw err;
      const message = e.info?.violations.find((v) => v.field === "received_amount")?.message ?? e.message;
      await listPage(req, res, { error: { reference, message, value: received }, status: e.status });
    }
  });
}
