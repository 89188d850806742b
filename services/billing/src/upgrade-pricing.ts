/**
 * What an upgrade costs and how long its price holds (issue 28 §3 and §5). A price is for the time
 * from the instant it was made to the date the service is paid up to, and it holds PRICE_HOLD_MS
 * from that instant, from quote to payment: a product upgrade's quote (GET upgrade paths) shows the
 * same amount until it expires, an upgrade requested before then is invoiced at exactly that amount,
 * and its invoice paid before then charges exactly its total (the change counting from the instant
 * it was priced). Paid later, the time between was spent on the old plan (or without the options),
 * so before any money moves the invoice is re-priced down to the time left from the payment and the
 * change counts from then (never up, never below what is already paid on it). A credit (a downgrade)
 * is priced when requested, never held. The API doc (Add-ons and upgrades) says so.
 */
import type { Sql, TxSql } from "@hb/platform";
import { clock } from "./clock.ts";
import { CYCLE_MONTHS, formatMoney, money, type Units } from "./money.ts";
import { prorate, remainingShare } from "./proration.ts";
import type { DocumentRow } from "./records.ts";

/** How long an upgrade invoice holds the price it was issued at. */
const PRICE_HOLD_MS = 30 * 60_000;

/** The instant an upgrade paid at `paidAt` counts from: when it was priced, within the hold; else the payment. */
export const pricedFrom = (pricedAt: Date, paidAt: Date): Date =>
  paidAt.getTime() - pricedAt.getTime() <= PRICE_HOLD_MS ? pricedAt : paidAt;

/** What a product upgrade's price is made on; a quote holds only while all of it is unchanged. */
export interface QuoteBasis {
  serviceId: string;
  toProductId: string;
  cycle: string;
  serviceAmount: Units;
  targetPrice: Units;
  pricedUntil: Date;
  /** The service's anchor day, whose terms the time left is measured on (proration.ts). */
  anchorDay?: number;
}

export interface Quote {
  amount: Units;
  /** The instant the amount is priced from. */
  pricedAt: Date;
  /** Until when the amount holds; none for a credit (priced when requested). */
  expiresAt?: Date;
}

const basisMatches = (db: Sql | TxSql, b: QuoteBasis) => db`
  service_id = ${b.serviceId} and to_product_id = ${b.toProductId}
  and service_amount = ${formatMoney(b.serviceAmount)} and target_price = ${formatMoney(b.targetPrice)}
  and priced_until = ${b.pricedUntil}`;

/**
 * The quote for moving a service to another product at `now`: the one still holding on the same
 * basis, else a new one (stored, so asking again within the hold shows the same amount).
 */
export async function quoteUpgrade(db: Sql | TxSql, b: QuoteBasis, now: Date): Promise<Quote> {
  const amount = prorate(
    b.serviceAmount,
    b.targetPrice,
    remainingShare(b.pricedUntil, b.cycle, now, b.anchorDay),
  );
  if (amount <= 0n) return { amount, pricedAt: now };
  const expires = new Date(now.getTime() + PRICE_HOLD_MS);
  // A live quote on the same basis is kept; an expired one, or one on another basis, is replaced.
  await db`
    insert into upgrade_quotes (service_id, to_product_id, amount, service_amount, target_price, priced_until, priced_at, expires_at)
    values (${b.serviceId}, ${b.toProductId}, ${formatMoney(amount)}, ${formatMoney(b.serviceAmount)},
            ${formatMoney(b.targetPrice)}, ${b.pricedUntil}, ${now}, ${expires})
    on conflict (service_id, to_product_id) do update set amount = excluded.amount,
      service_amount = excluded.service_amount, target_price = excluded.target_price,
      priced_until = excluded.priced_until, priced_at = excluded.priced_at, expires_at = excluded.expires_at
    where upgrade_quotes.expires_at <= excluded.priced_at or upgrade_quotes.service_amount <> excluded.service_amount
      or upgrade_quotes.target_price <> excluded.target_price or upgrade_quotes.priced_until <> excluded.priced_until`;
  const [q] = await db<{ amount: string; priced_at: Date; expires_at: Date }[]>`
    select amount::text, priced_at, expires_at from upgrade_quotes where ${basisMatches(db, b)}`;
  return q
    ? { amount: money(q.amount), pricedAt: q.priced_at, expiresAt: q.expires_at }
    : { amount, pricedAt: now };
}

/** The price a product upgrade requested at `now` is invoiced at: its live quote's, else priced now. */
export async function upgradePrice(tx: TxSql, b: QuoteBasis, now: Date): Promise<Quote> {
  const [q] = await tx<{ amount: string; priced_at: Date; expires_at: Date }[]>`
    select amount::text, priced_at, expires_at from upgrade_quotes
    where ${basisMatches(tx, b)} and expires_at > ${now}`;
  if (q) return { amount: money(q.amount), pricedAt: q.priced_at, expiresAt: q.expires_at };
  const amount = prorate(
    b.serviceAmount,
    b.targetPrice,
    remainingShare(b.pricedUntil, b.cycle, now, b.anchorDay),
  );
  return { amount, pricedAt: now };
}

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
  priced_at: Date | null;
}

/**
 * Called before an upgrade invoice is paid (renewals.ts upgradePayable): an invoice paid past its
 * hold is re-priced to the time left from now. `doc.total` is updated for the payment to read.
 */
export async function repriceLateUpgrade(tx: TxSql, doc: DocumentRow): Promise<void> {
  const [u] = await tx<PricedUpgrade[]>`
    select id, order_id, kind, to_product_id, add_options, priced_until, created_at, priced_at from upgrades
    where document_id = ${doc.id} and status = 'awaiting_payment'`;
  const now = clock.now();
  if (!u?.priced_until || !doc.service_id || pricedFrom(u.priced_at ?? u.created_at, now) !== now) return;
  const [s] = await tx<{ amount: string; cycle: string; anchor_day: number | null }[]>`
    select amount::text, cycle, anchor_day from services where id = ${doc.service_id}`;
  if (!s) return;
  const share = remainingShare(u.priced_until, s.cycle, now, s.anchor_day ?? undefined);
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
