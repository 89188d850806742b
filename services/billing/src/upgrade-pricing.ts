/**
 * What an upgrade costs and when its price holds (issue 28 §3 and §5). An upgrade is priced for
 * the time from its request to the date the service is paid up to, and its invoice holds that
 * price for PRICE_HOLD_MS: paid within it, the invoice's total is what is charged, to the
 * ten-thousandth, and the change counts from the request. Paid later, the time between was spent
 * on the old plan (or without the options), so before any money moves the invoice is re-priced
 * down to the time left from the payment and the change counts from then (never up, never below
 * what is already paid on it). The API doc (Upgrades) says so.
 */
import type { TxSql } from "@hb/platform";
import { clock } from "./clock.ts";
import { CYCLE_MONTHS, formatMoney, money, type Units } from "./money.ts";
import { prorate, remainingShare } from "./proration.ts";
import type { DocumentRow } from "./records.ts";

/** How long an upgrade invoice holds the price it was issued at. */
export const PRICE_HOLD_MS = 30 * 60_000;

/** The instant an upgrade paid at `paidAt` is priced from: its request within the hold, else the payment. */
export const pricedFrom = (requestedAt: Date, paidAt: Date): Date =>
  paidAt.getTime() - requestedAt.getTime() <= PRICE_HOLD_MS ? requestedAt : paidAt;

/** Price of `cycle` for an option priced per month. */
export const cyclePrice = (monthly: Units, cycle: string) => monthly * BigInt(CYCLE_MONTHS[cycle] ?? 1);

/**
 * What adding recurring options costs for `share` cycles of the service (ppm), per option, in the
 * order given: each its service-cycle price prorated (rounded half up, as every charge).
 */
export async function optionCharges(
  tx: TxSql,
  optionIds: string[],
  cycle: string,
  share: bigint,
): Promise<Units[]> {
  if (optionIds.length === 0) return [];
  const rows = await tx<{ id: string; recurring_price: string | null }[]>`
    select id, recurring_price::text from product_options where id in ${tx(optionIds)}`;
  const monthly = new Map(rows.map((r) => [r.id, money(r.recurring_price ?? "0")]));
  return optionIds.map((id) => prorate(0n, cyclePrice(monthly.get(id) ?? 0n, cycle), share));
}

interface PricedUpgrade {
  id: string;
  order_id: string | null;
  kind: string;
  to_product_id: string | null;
  add_options: string[];
  priced_until: Date | null;
  created_at: Date;
}

/**
 * Called before an upgrade invoice is paid (renewals.ts upgradePayable): an invoice paid past its
 * hold is re-priced to the time left from now. `doc.total` is updated for the payment to read.
 */
export async function repriceLateUpgrade(tx: TxSql, doc: DocumentRow): Promise<void> {
  const [u] = await tx<PricedUpgrade[]>`
    select id, order_id, kind, to_product_id, add_options, priced_until, created_at from upgrades
    where document_id = ${doc.id} and status = 'awaiting_payment'`;
  const now = clock.now();
  if (!u?.priced_until || !doc.service_id || pricedFrom(u.created_at, now) !== now) return;
  const [s] = await tx<{ amount: string; cycle: string }[]>`
    select amount::text, cycle from services where id = ${doc.service_id}`;
  if (!s) return;
  const share = remainingShare(u.priced_until, s.cycle, now);
  let fair: Units;
  if (u.kind === "product" && u.to_product_id) {
    const [p] = await tx<{ price: string }[]>`
      select price::text from product_prices where product_id = ${u.to_product_id} and cycle = ${s.cycle}`;
    if (!p) return;
    fair = prorate(money(s.amount), money(p.price), share);
  } else {
    fair = (await optionCharges(tx, u.add_options, s.cycle, share)).reduce((a, b) => a + b, 0n);
  }
  if (fair <= 0n || fair >= money(doc.total) || fair < money(doc.amount_paid)) return;
  const total = formatMoney(fair);
  // Independent statements: sent together in one round trip on the transaction's connection.
  await Promise.all([
    tx`update document_lines set amount = ${total} where document_id = ${doc.id}`.execute(),
    tx`update documents set total = ${total} where id = ${doc.id}`.execute(),
    tx`update upgrades set amount = ${total} where id = ${u.id}`.execute(),
    u.order_id ? tx`update orders set total = ${total} where id = ${u.order_id}`.execute() : null,
  ]);
  // The payment about to be taken reads the total from this row.
  doc.total = total;
}
