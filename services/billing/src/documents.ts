import { apiError, newId, type TxSql } from "@hb/platform";
import { currencyMismatch, lockBalance, lockedBalance } from "./account-currency.ts";
import { clock } from "./clock.ts";
import { insufficientCredit, movementCtes } from "./ledger.ts";
import { formatMoney, money, toNumber, type Units } from "./money.ts";
import { checkPayable, dispatchPaid, type PaidOutcome } from "./paid-dispatch.ts";
import type { DocumentRow, OrderRow, ServiceRow } from "./records.ts";

const WEEK_MS = 7 * 86_400_000;

export interface NewDocument {
  /** Given when a statement sent in the same round trip must name the document. */
  id?: string;
  kind: "invoice" | "proforma";
  customerId: string;
  personId: string | null;
  currency: string;
  purpose: "order" | "renewal" | "manual" | "upgrade" | "addon";
  orderId?: string;
  serviceId?: string;
  lines: { description: string; amount: Units; serviceId?: string }[];
  /** When it falls due (default: a week from now); a renewal falls due when its term starts. */
  dueDate?: Date;
  /** CTEs the same statement runs first (the order and its services, which the document refers to). */
  with?: ReturnType<TxSql>;
}

/**
 * Writes the document and its lines in one statement. `paid` records a document settled as it is
 * made (the invoice a paid proforma converts into; `converts` names that proforma, which the same
 * statement points at the new invoice).
 */
export async function createDocument(
  tx: TxSql,
  d: NewDocument,
  paid?: { at: Date; converts?: string },
): Promise<DocumentRow> {
  const id = d.id ?? newId();
  const total = formatMoney(d.lines.reduce((sum, l) => sum + l.amount, 0n));
  const prefix = d.kind === "invoice" ? "INV" : "PRO";
  const lineIds = d.lines.map(() => newId());
  const [row] = await tx<DocumentRow[]>`
    with ${d.with ? tx`${d.with},` : tx``} doc as (
      insert into documents (id, kind, number, customer_id, person_id, total, currency, purpose, order_id, service_id,
                             status, amount_paid, paid_at, due_date, created_at)
      values (${id}, ${d.kind}, ${`${prefix}-${clock.now().getUTCFullYear()}-`} || nextval('document_numbers'),
              ${d.customerId}, ${d.personId}, ${total}, ${d.currency}, ${d.purpose},
              ${d.orderId ?? null}, ${d.serviceId ?? null},
              ${paid ? "paid" : "unpaid"}, ${paid ? total : "0"}, ${paid?.at ?? null},
              ${d.dueDate ?? new Date(clock.now().getTime() + WEEK_MS)}, ${clock.now()})
      returning *),
    lines as (
      insert into document_lines (id, document_id, description, amount, service_id)
      select line.id, doc.id, line.description, line.amount, line.service_id
      from doc, unnest(${lineIds}::uuid[], ${d.lines.map((l) => l.description)}::text[],
                       ${d.lines.map((l) => formatMoney(l.amount))}::numeric[],
                       ${d.lines.map((l) => l.serviceId ?? null)}::uuid[])
             as line(id, description, amount, service_id)),
    converted as (
      update documents set converted_to = (select id from doc) where id = ${paid?.converts ?? null}::uuid)
    select * from doc`.execute();
  return row;
}

export interface PaymentOutcome {
  creditApplied: Units;
  newBalance: Units;
  remaining: Units;
  document: DocumentRow;
  /** The order the payment settled, as it is now (an order's proforma paid in full). */
  order?: OrderRow;
  /** The services of that order the payment started (pending, to be built), oldest first. */
  services?: ServiceRow[];
  /** The invoice a paid proforma converted into (or the invoice itself). */
  invoice: DocumentRow | undefined;
  fullyPaid: boolean;
}

/**
 * Pays a document from the payer's credit, in the caller's transaction. Locks the payer's balance
 * first, then the document, so concurrent payments of one document charge it once. `locked` is
 * what the caller already read of both with lockedBalance and lockedDocument, in that order.
 */
export async function payFromCredit(
  tx: TxSql,
  ns: string,
  documentId: string,
  payer: Payer,
  requested: Units | undefined,
  locked?: { balance: { balance: string; currency: string } | undefined; document: DocumentRow },
): Promise<PaymentOutcome> {
  // The balance is locked before the document, always, so two payments never wait on each other
  // in opposite orders. A payer without a balance row yet needs the document's currency to open
  // one (a caller that read both together holds the document first then, but such a payer has
  // nothing to pay with and is refused).
  const balance = locked ? locked.balance : await lockedBalance(tx, payer.personId);
  if (!balance) {
    const currency =
      locked?.document.currency ??
      (await tx<DocumentRow[]>`select currency from documents where id = ${documentId}`)[0].currency;
    await lockBalance(tx, payer.personId, payer.customerId, currency);
  }
  const doc = locked?.document ?? (await lockedDocument(tx, documentId));
  if (balance && balance.currency !== doc.currency) throw currencyMismatch(doc.currency, balance.currency);
  return settle(tx, ns, doc, payer, requested);
}

/**
 * The document, locked for the rest of the transaction; `owner` limits it to one customer's
 * documents of one kind (undefined when there is none).
 */
export async function lockedDocument(
  tx: TxSql,
  documentId: string,
  owner?: { customerId: string; kind: string },
): Promise<DocumentRow> {
  const [doc] = await tx<DocumentRow[]>`
    select * from documents where id = ${documentId}
      ${owner ? tx`and customer_id = ${owner.customerId} and kind = ${owner.kind}` : tx``}
    for update`.execute();
  return doc;
}

/**
 * Pays in full, from credit, a document this transaction created (`createDocument`'s row and its
 * lines). No other transaction can see the document before this one commits, so it needs no lock
 * and no re-read; the caller must already hold the payer's balance (lockBalance).
 */
export function payNewDocumentFromCredit(
  tx: TxSql,
  ns: string,
  created: { document: DocumentRow; lines: NewDocument["lines"] },
  payer: Payer,
): Promise<PaymentOutcome> {
  return settle(tx, ns, created.document, payer, undefined, created.lines);
}

/**
 * Writes a proforma and pays it in full from credit the caller has locked and knows to cover it,
 * with what paying it sets in motion (the invoice it becomes, the order and its services). The
 * statements go to PostgreSQL together, in this order, in one round trip (postgres.js pipelines
 * the queries started in one tick on the transaction's connection, and PostgreSQL runs them one
 * after another). If the payment moved no money, this throws and the transaction rolls back,
 * taking the statements sent after it along.
 */
export async function createAndPayFromCredit(
  tx: TxSql,
  ns: string,
  d: NewDocument & { kind: "proforma" },
  payer: Payer,
): Promise<PaymentOutcome> {
  const id = d.id ?? newId();
  const total = d.lines.reduce((sum, l) => sum + l.amount, 0n);
  const now = clock.now();
  const created = createDocument(tx, { ...d, id });
  // The proforma's number is drawn by the statement above, so the ledger's description reads it.
  const movement = movementCtes(tx, {
    personId: payer.personId,
    customerId: payer.customerId,
    amount: -total,
    kind: "payment",
    description: tx`(select 'Payment of proforma ' || number from documents where id = ${id})`,
    documentId: id,
  });
  const payment = tx<(DocumentRow & { balance_after: string })[]>`
    with ${movement},
    updated as (
      update documents set amount_paid = amount_paid + ${formatMoney(total)}, status = 'paid', paid_at = ${now}
      where id = ${id} and status = 'unpaid' and exists (select 1 from entry)
      returning *)
    select updated.*, entry.balance_after::text as balance_after from updated, entry`.execute();
  // What onPaid reads of the document, as the statements above leave it.
  const paidDoc: DocumentRow = {
    id,
    kind: d.kind,
    number: "",
    customer_id: d.customerId,
    person_id: d.personId,
    status: "paid",
    total: formatMoney(total),
    amount_paid: formatMoney(total),
    currency: d.currency,
    purpose: d.purpose,
    order_id: d.orderId ?? null,
    service_id: d.serviceId ?? null,
    converted_to: null,
    created_at: now,
    due_date: now,
    paid_at: now,
  };
  const effects = onPaid(tx, ns, paidDoc, d.lines);
  const [, [row], { invoice, order, services }] = await Promise.all([created, payment, effects]);
  if (!row) throw insufficientCredit();
  const { balance_after, ...updated } = row;
  return {
    order,
    services,
    creditApplied: total,
    newBalance: money(balance_after),
    remaining: 0n,
    document: { ...updated, converted_to: invoice.id },
    invoice,
    fullyPaid: true,
  };
}

/** The refusals of a payment, here and in the one-statement pay (document-pay.ts). */
export const alreadySettled = (kind: string, status: string) =>
  apiError("CONFLICT", `This ${kind} is already ${status}`);

export const amountNotPositive = () =>
  apiError("BAD_REQUEST", "amount must be greater than zero", {
    violations: [{ field: "amount", message: "must be greater than zero" }],
  });

export const amountOverDue = (remaining: Units) =>
  apiError("BAD_REQUEST", `amount exceeds the amount due (${formatMoney(remaining)})`, {
    violations: [{ field: "amount", message: `must be at most ${toNumber(remaining)}` }],
  });

interface Payer {
  personId: string;
  customerId: string;
}

/** The payment itself, on a document the caller has locked (or made) and a balance it holds. */
async function settle(
  tx: TxSql,
  ns: string,
  doc: DocumentRow,
  payer: Payer,
  requested: Units | undefined,
  lines?: NewDocument["lines"],
): Promise<PaymentOutcome> {
  if (doc.status !== "unpaid") throw alreadySettled(doc.kind, doc.status);
  await checkPayable(tx, doc);
  const remaining = money(doc.total) - money(doc.amount_paid);
  const amount = requested ?? remaining;
  if (amount <= 0n) throw amountNotPositive();
  if (amount > remaining) throw amountOverDue(remaining);
  const fullyPaid = amount === remaining;
  // The movement (balance and ledger) and the document's paid amount in one statement: the
  // document changes only when the money moved.
  const movement = movementCtes(tx, {
    personId: payer.personId,
    customerId: payer.customerId,
    amount: -amount,
    kind: "payment",
    description: `Payment of ${doc.kind} ${doc.number}`,
    documentId: doc.id,
  });
  const [row] = await tx<(DocumentRow & { balance_after: string })[]>`
    with ${movement},
    updated as (
      update documents set amount_paid = amount_paid + ${formatMoney(amount)},
        status = ${fullyPaid ? "paid" : "unpaid"}, paid_at = ${fullyPaid ? clock.now() : null}
      where id = ${doc.id} and exists (select 1 from entry)
      returning *)
    select updated.*, entry.balance_after::text as balance_after from updated, entry`;
  if (!row) throw insufficientCredit();
  const { balance_after, ...updated } = row;
  const newBalance = money(balance_after);
  let invoice: DocumentRow | undefined = doc.kind === "invoice" ? updated : undefined;
  let order: OrderRow | undefined;
  if (fullyPaid) ({ invoice, order } = await onPaid(tx, ns, updated, lines));
  return {
    order,
    creditApplied: amount,
    newBalance,
    remaining: remaining - amount,
    // A paid proforma now points at the invoice it became (onPaid wrote that after `updated`).
    document: invoice && invoice.id !== updated.id ? { ...updated, converted_to: invoice.id } : updated,
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

/**
 * What a fully paid document sets in motion: a paid proforma becomes an invoice, and the features
 * registered for its purpose (paid-dispatch.ts) do the rest. Returns the invoice that records the
 * payment, and the order the payment settled when there is one.
 */
async function onPaid(
  tx: TxSql,
  ns: string,
  doc: DocumentRow,
  knownLines?: NewDocument["lines"],
): Promise<{ invoice: DocumentRow } & PaidOutcome> {
  const lines = doc.kind === "proforma" ? (knownLines ?? (await linesOf(tx, doc.id))) : undefined;
  // The invoice and the features' first statements (an order's and its services' updates) are
  // independent and sent together: postgres.js pipelines the queries started in one tick on the
  // transaction's connection, so they cost one round trip instead of three (the order path's
  // largest cost is the socket writes to PostgreSQL, docs/benchmarks.md). The invoice's id is
  // drawn here so that the features can name it before it is written.
  const invoiceId = lines ? newId() : doc.id;
  const invoiceWritten = lines
    ? createDocument(
        tx,
        {
          id: invoiceId,
          kind: "invoice",
          customerId: doc.customer_id,
          personId: doc.person_id,
          currency: doc.currency,
          purpose: doc.purpose as NewDocument["purpose"],
          orderId: doc.order_id ?? undefined,
          serviceId: doc.service_id ?? undefined,
          lines,
        },
        { at: clock.now(), converts: doc.id },
      )
    : doc;
  const [invoice, outcome] = await Promise.all([invoiceWritten, dispatchPaid(tx, ns, doc, { invoiceId })]);
  return { invoice, ...outcome };
}

async function linesOf(tx: TxSql, documentId: string): Promise<NewDocument["lines"]> {
  const rows = await tx<{ description: string; amount: string; service_id: string | null }[]>`
    select description, amount, service_id from document_lines where document_id = ${documentId} order by id`;
  return rows.map((l) => ({
    description: l.description,
    amount: money(l.amount),
    serviceId: l.service_id ?? undefined,
  }));
}
