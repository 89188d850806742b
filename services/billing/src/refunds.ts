import { newId, prepared, type TxSql } from "@hb/platform";
import { paidTerms, termsValue } from "./addon-terms.ts";
import { completeCoveredDocument } from "./documents.ts";
import { refundPayments } from "./ledger.ts";
import { formatMoney, money, type Units } from "./money.ts";
import { remainingShare } from "./proration.ts";
import type { ServiceRow } from "./records.ts";

/**
 * Where credit for giving something up comes from. Credit is always the unused share of what was
 * actually paid for the thing given up, and it returns to whoever paid it (refundPayments).
 */

export interface AddonRow {
  id: string;
  service_id: string;
  option_id: string;
  name: string;
  billing_type: string;
  cycle: string;
  quantity: number;
  amount: string;
  status: string;
  document_id: string | null;
  paid_amount: string;
  period_start: Date | null;
  started_at: Date;
  next_due_date: Date | null;
  funding_documents: string[];
}

export const addonSelect = `select a.*, o.name from service_addons a join product_options o on o.id = a.option_id`;

/**
 * What an add-on is still worth to its payer: the unused share of its current term plus the terms
 * paid ahead (addon-terms.ts); nothing when one-time, unpaid or run out.
 */
export async function addonValue(tx: TxSql, a: AddonRow, now: Date): Promise<Units> {
  if (a.billing_type !== "recurring" || a.status !== "active" || !a.next_due_date) return 0n;
  return termsValue(await paidTerms(tx, a), now);
}

/**
 * One rule for abuse: while the supplier holds a suspension, giving anything up (the service or
 * an add-on) returns nothing.
 */
export const supplierHolds = (s: { suspensions: string[] }) => s.suspensions.includes("supplier");

/** The paid documents that bought the service's time (order, renewals, product upgrades), newest first. */
export async function serviceDocuments(tx: TxSql, serviceId: string): Promise<string[]> {
  const rows = await tx<{ id: string }[]>`
    select d.id from documents d
    where d.status in ('paid', 'converted') and d.purpose in ('order', 'renewal', 'upgrade')
      and exists (select 1 from document_lines l where l.document_id = d.id and l.service_id = ${serviceId})
      and not exists (select 1 from upgrades u where u.document_id = d.id and u.kind = 'options')
    order by d.created_at desc, d.id desc`;
  return rows.map((r) => r.id);
}

/** The unused share of the service's own price (its add-ons apart) at `now`, rounded down. */
function serviceValue(s: ServiceRow, now: Date): Units {
  if (s.cycle === "hourly") return 0n;
  return (
    (money(s.amount) * remainingShare(s.next_due_date, s.cycle, now, s.anchor_day ?? undefined)) / 1_000_000n
  );
}

/**
 * Cancels a document nobody finished paying and gives any part-payment back to whoever made it.
 * Already paid or cancelled documents are left alone.
 */
export async function cancelDocument(tx: TxSql, documentId: string, why: string): Promise<void> {
  const [d] = await tx<{ amount_paid: string; number: string }[]>`
    update documents set status = 'cancelled' where id = ${documentId} and status = 'unpaid'
    returning amount_paid::text, number`;
  // A cancelled renewal gives its term up: it can be issued again (e.g. after a withdrawn cancellation).
  if (d) await tx`delete from renewal_terms where document_id = ${documentId}`;
  if (d && money(d.amount_paid) > 0n) {
    await refundPayments(
      tx,
      [documentId],
      money(d.amount_paid),
      `Refund of part-payment on ${d.number}: ${why}`,
    );
    // The part-payment went back: the document no longer holds it (the ledger records both).
    await tx`update documents set amount_paid = 0 where id = ${documentId}`;
  }
}

/**
 * Ends add-ons (cancelled at once). With `refund`, the unused share of what was paid for each goes
 * back to its payers; an add-on still awaiting payment has its invoice cancelled (part-payments
 * returned). Returns the credit the add-ons were worth (refunded or not).
 */
export async function endAddons(
  tx: TxSql,
  rows: AddonRow[],
  now: Date,
  opts: { refund: boolean; why: string },
): Promise<Units> {
  let worth = 0n;
  for (const a of rows) {
    await tx`update service_addons set status = 'cancelled', cancelled_at = ${now} where id = ${a.id} and status <> 'cancelled'`;
    // Its renewal still open goes with it (part-payments returned).
    const renewals = await tx<{ id: string }[]>`
      select d.id from renewal_terms r join documents d on d.id = r.document_id
      where r.addon_id = ${a.id} and d.status = 'unpaid' for update of d`;
    for (const r of renewals) await cancelDocument(tx, r.id, opts.why);
    if (a.status === "pending_payment" && a.document_id) {
      await cancelDocument(tx, a.document_id, opts.why);
      continue;
    }
    const value = await addonValue(tx, a, now);
    worth += value;
    if (opts.refund && value > 0n) {
      await refundPayments(tx, a.funding_documents, value, `${a.name}: unused share returned (${opts.why})`);
    }
  }
  return worth;
}

/**
 * A service ended before its order was paid stops being charged: its lines on the order's open
 * document are offset by a cancelling line. A document left with nothing to pay is cancelled
 * (part-payments returned); one whose part-payments now cover it is settled, the excess returned.
 */
async function dropFromUnpaidOrder(tx: TxSql, ns: string, s: ServiceRow, why: string) {
  const docs = await tx<{ id: string; number: string; amount_paid: string }[]>`
    select d.id, d.number, d.amount_paid::text from documents d
    where d.status = 'unpaid' and d.purpose = 'order'
      and exists (select 1 from document_lines l where l.document_id = d.id and l.service_id = ${s.id})
    for update`;
  for (const d of docs) {
    const [{ owed }] = await tx<{ owed: string }[]>`
      select coalesce(sum(amount), 0)::text as owed from document_lines where document_id = ${d.id} and service_id = ${s.id}`;
    if (money(owed) === 0n) continue;
    await tx`insert into document_lines (id, document_id, description, amount, service_id)
      values (${newId()}, ${d.id}, ${`Cancelled before payment: ${s.name} (${why})`}, ${formatMoney(-money(owed))}, ${s.id})`;
    const [{ total }] = await tx<{ total: string }[]>`
      select coalesce(sum(amount), 0)::text as total from document_lines where document_id = ${d.id}`;
    const paid = money(d.amount_paid);
    const left = money(total);
    if (left === 0n) {
      await tx`update documents set total = 0, amount_paid = 0 where id = ${d.id}`;
      if (paid > 0n) await refundPayments(tx, [d.id], paid, `Refund on ${d.number}: ${why}`);
      await tx`update documents set status = 'cancelled' where id = ${d.id}`;
      continue;
    }
    if (paid > left) await refundPayments(tx, [d.id], paid - left, `Refund on ${d.number}: ${why}`);
    await tx`update documents set total = ${total}, amount_paid = least(amount_paid, ${total}) where id = ${d.id}`;
    await tx`update orders set total = ${total} where id = (select order_id from documents where id = ${d.id})`;
    if (paid >= left) await completeCoveredDocument(tx, ns, d.id);
  }
}

/**
 * What ending a service settles: open documents cancelled (part-payments returned), upgrades
 * awaiting payment cancelled, add-ons ended. With `refund.service` the unused share of the
 * service's own time goes back to whoever paid for it; with `refund.addons` that of its recurring
 * add-ons (prepaid add-ons are not forfeited when the service ends, issue 28 §3).
 */
export async function settleTermination(
  tx: TxSql,
  ns: string,
  s: ServiceRow,
  now: Date,
  refund: { service: boolean; addons: boolean },
  why: string,
) {
  // What had bought the service's time before this termination: a part-payment that the drop
  // below completes (the order's other items paid for) never paid for this service.
  const funding = refund.service ? await serviceDocuments(tx, s.id) : [];
  await dropFromUnpaidOrder(tx, ns, s, why);
  const upgrades = await tx<{ id: string; order_id: string | null }[]>`
    update upgrades set status = 'cancelled' where service_id = ${s.id} and status = 'awaiting_payment'
    returning id, order_id`;
  for (const u of upgrades)
    if (u.order_id) await tx`update orders set status = 'cancelled' where id = ${u.order_id}`;
  const open = await tx<{ id: string }[]>`
    select id from documents where service_id = ${s.id} and status = 'unpaid' order by created_at for update`;
  for (const d of open) await cancelDocument(tx, d.id, why);
  const addons = await tx.unsafe<AddonRow[]>(
    `${addonSelect} where a.service_id = $1 and a.status <> 'cancelled' order by a.started_at for update of a`,
    [s.id],
    prepared,
  );
  await endAddons(tx, addons, now, { refund: refund.addons, why });
  if (refund.service) {
    const value = serviceValue(s, now);
    if (value > 0n) {
      await refundPayments(
        tx,
        funding,
        value,
        `${s.name}: unused time returned (${why}), ${formatMoney(value)}`,
      );
    }
  }
}
