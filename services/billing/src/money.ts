/**
 * Billing's arithmetic on amounts and cycles. Reading and writing an amount is the platform's
 * (@hb/platform money.ts), re-exported here for billing's modules.
 */
export { formatMoney, money, parseMoney, requestedMoney, toNumber, type Units } from "@hb/platform/money";

import type { Units } from "@hb/platform/money";

export const min = (a: Units, b: Units): Units => (a < b ? a : b);
export const max = (a: Units, b: Units): Units => (a > b ? a : b);

/** Months in a billing cycle. */
export const CYCLE_MONTHS: Record<string, number> = {
  monthly: 1,
  quarterly: 3,
  semiannually: 6,
  annually: 12,
  biennially: 24,
};
/** Hourly products are charged from credit each hour, without a document. */
export const HOURLY = "hourly";

/**
 * The next due date one cycle after `from`, on the term's anchor day (the day of month its first
 * term started), clamped to the end of a shorter month. Due dates are worked out from the anchor,
 * never from the previous clamped date: monthly from Jan 31 reads Feb 28, Mar 31, Apr 30, not Mar 28
 * for ever (issue 28 §2). Without an anchor, `from`'s own day is the anchor (a first term).
 */
export function addCycle(from: Date, cycle: string, anchorDay?: number): Date {
  if (cycle === HOURLY) return new Date(from.getTime() + 3_600_000);
  return shiftMonths(from, CYCLE_MONTHS[cycle] ?? 1, anchorDay);
}

/** `months` later (or earlier) on the anchor day (`from`'s own by default), clamped to the month's end. */
export function shiftMonths(from: Date, months: number, anchorDay = from.getUTCDate()): Date {
  const d = new Date(from.getTime());
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() + months);
  const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(anchorDay, last));
  return d;
}

/** The n-th due date of a term anchored at `anchor` (its first term's start): anchor + n cycles. */
export const nthDueDate = (anchor: Date, cycle: string, n: number): Date =>
  shiftMonths(anchor, (CYCLE_MONTHS[cycle] ?? 1) * n);

/** Monthly-equivalent of a recurring amount (for usage), rounded to 4 decimals. */
export function monthlyEquivalent(amount: Units, cycle: string): Units {
  if (cycle === HOURLY) return amount * 730n; // hours in an average month
  const months = BigInt(CYCLE_MONTHS[cycle] ?? 1);
  return (amount + months / 2n) / months;
}
