import { apiError, newId, type TxSql } from "@hb/platform";
import { onAddonOrUpgradePaid, upgradeAwaitingPayment } from "./addons-upgrades.ts";
import { clock } from "./clock.ts";
import { orderEvent } from "./events.ts";
import { lockBalance, move } from "./ledger.ts";
import { addCycle, formatMoney, money, toNumber, type Units } from "./money.ts";
import type { DocumentRow, OrderRow } from "./records.ts";

export interface NewDocument {
  kind: "invoice" | "proforma";
  customerId: string;
  personId: string | null;
  currency: string;
  purpose: "order" | "renewal" | "manual" | "upgrade" | "addon";
  orderId?: string;
  serviceId?: string;
  lines: { description: string; amount: Units; serviceId?: string }[];
}

export async function createDocument(tx: TxSql, d: NewDocument): Promise<DocumentRow> {
  const id = newId();
  const total = d.lines.reduce((sum, l) => sum + l.amount, 0n);
  const prefix = d.kind === "invoice" ? "INV" : "PRO";
  const [row] = await tx<DocumentRow[]>`
    insert into documents (id, kind, number, customer_id, person_id, total, currency, purpose, order_id, service_id)
    values (${id}, ${d.kind}, ${`${prefix}-${clock.now().getUTCFullYear()}-`} || nextval('document_numbers'),
            ${d.customerId}, ${d.personId}, ${formatMoney(total)}, ${d.currency}, ${d.purpose},
            ${d.orderId ?? null}, ${d.serviceId ?? null})
    returning *`;
  for (const l of d.lines) {
    await tx`insert into document_lines (id, document_id, description, amount, service_id)
      values (${newId()}, ${id}, ${l.description}, ${formatMoney(l.amount)}, ${l.serviceId ?? null})`;
  }
  return row;
}

export interface PaymentOutcome {
  creditApplied: Units;
  newBalance: Units;
  remaining: Units;
  document: DocumentRow;
  /** The invoice a paid proforma converted into (or the invoice itself). */
  invoice: DocumentRow | undefined;
  fullyPaid: boolean;
}

/**
 * Pays a document from the payer's credit, in the caller's transaction. Locks the payer's balance
 * first, then the document, so concurrent payments of one document charge it once.
 */
export async function payFromCredit(
  tx: TxSql,
  ns: string,
  documentId: string,
  payer: { personId: string; customerId: string },
  requested: Units | undefined,
): Promise<PaymentOutcome> {
  const [peek] = await tx<DocumentRow[]>`select * from documents where id = ${documentId}`;
  await lockBalance(tx, payer.personId, payer.customerId, peek.currency);
  const [doc] = await tx<DocumentRow[]>`select * from documents where id = ${documentId} for update`;
  if (doc.status !== "unpaid") throw apiError("CONFLICT", `This ${doc.kind} is already ${doc.status}`);
  if (doc.purpose === "renewal" && doc.service_id) {
    // The renewal is priced at the current plan; an upgrade still waiting would change that price.
    if (await upgradeAwaitingPayment(tx, doc.service_id))
      throw apiError(
        "CONFLICT",
        "An upgrade of this service awaits payment; pay or cancel it before the renewal",
      );
  }
  const remaining = money(doc.total) - money(doc.amount_paid);
  const amount = requested ?? remaining;
  if (amount <= 0n)
    throw apiError("BAD_REQUEST", "amount must be greater than zero", {
      violations: [{ field: "amount", message: "must be greater than zero" }],
    });
  if (amount > remaining) {
    throw apiError("BAD_REQUEST", `amount exceeds the amount due (${formatMoney(remaining)})`, {
      violations: [{ field: "amount", message: `must be at most ${toNumber(remaining)}` }],
    });
  }
  const newBalance = await move(tx, {
    personId: payer.personId,
    customerId: payer.customerId,
    amount: -amount,
    kind: "payment",
    description: `Payment of ${doc.kind} ${doc.number}`,
    documentId: doc.id,
  });
  const fullyPaid = amount === remaining;
  const [updated] = await tx<DocumentRow[]>`
    update documents set amount_paid = amount_paid + ${formatMoney(amount)},
      status = ${fullyPaid ? "paid" : "unpaid"}, paid_at = ${fullyPaid ? clock.now() : null}
    where id = ${doc.id} returning *`;
  let invoice: DocumentRow | undefined = doc.kind === "invoice" ? updated : undefined;
  if (fullyPaid) invoice = await onPaid(tx, ns, updated);
  return {
    creditApplied: amount,
    newBalance,
    remaining: remaining - amount,
    document: updated,
    invoice,
    fullyPaid,
  };
}

/**
 * Marks a document whose part-payments now cover its (reduced) total as paid, and sets in motion
 * what paying it does.
 */
export async function completeCoveredDocument(tx: TxSql, ns: string, documentId: string) {
  const [doc] = await tx<DocumentRow[]>`
    update documents set status = 'paid', paid_at = ${clock.now()} where id = ${documentId} and status = 'unpaid'
      and amount_paid >= total returning *`;
  if (doc) await onPaid(tx, ns, doc);
}

/** What a fully paid document sets in motion. Returns the invoice that records the payment. */
async function onPaid(tx: TxSql, ns: string, doc: DocumentRow): Promise<DocumentRow> {
  let invoice = doc;
  if (doc.kind === "proforma") {
    const lines = await tx<{ description: string; amount: string; service_id: string | null }[]>`
      select description, amount, service_id from document_lines where document_id = ${doc.id}`;
    invoice = await createDocument(tx, {
      kind: "invoice",
      customerId: doc.customer_id,
      personId: doc.person_id,
      currency: doc.currency,
      purpose: doc.purpose as NewDocument["purpose"],
      orderId: doc.order_id ?? undefined,
      serviceId: doc.service_id ?? undefined,
      lines: lines.map((l) => ({
        description: l.description,
        amount: money(l.amount),
        serviceId: l.service_id ?? undefined,
      })),
    });
    [invoice] = await tx<DocumentRow[]>`
      update documents set status = 'paid', amount_paid = total, paid_at = ${clock.now()} where id = ${invoice.id} returning *`;
    await tx`update documents set converted_to = ${invoice.id} where id = ${doc.id}`;
  }
  if (doc.purpose === "order" && doc.order_id) {
    const [order] = await tx<OrderRow[]>`
      update orders set payment_status = 'paid', status = 'active', payment_error = null where id = ${doc.order_id} returning *`;
    // Provisioning starts only now (the provisioner picks up services in `pending`), and so does
    // the paid term: a proforma paid a week after the order still buys a whole cycle.
    const now = clock.now();
    const waiting = await tx<{ id: string; cycle: string }[]>`
      select id, cycle from services where order_id = ${doc.order_id} and status = 'pending_payment'`;
    for (const s of waiting) {
      await tx`update services set status = 'pending', next_due_date = ${addCycle(now, s.cycle)} where id = ${s.id}`;
    }
    // A partner learns of the payment once the services are built (see provisioning.ts).
    if (!order.partner_id) await orderEvent(tx, ns, "order.paid", order, { invoiceId: invoice.id });
  }
  if (doc.purpose === "addon" || doc.purpose === "upgrade") await onAddonOrUpgradePaid(tx, doc);
  if (doc.purpose === "renewal" && doc.service_id) await extendPaidTerm(tx, doc.service_id);
  return invoice;
}

/** A paid renewal moves the date the service is paid up to one cycle further. */
export async function extendPaidTerm(tx: TxSql, serviceId: string) {
  const [s] = await tx<
    { next_due_date: Date; cycle: string }[]
  >`select next_due_date, cycle from services where id = ${serviceId}`;
  await tx`update services set next_due_date = ${addCycle(s.next_due_date, s.cycle)} where id = ${serviceId}`;
}
