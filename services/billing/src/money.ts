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

/** The next due date one cycle after `from`, clamped to the end of a shorter month. */
export function addCycle(from: Date, cycle: string): Date {
  if (cycle === HOURLY) return new Date(from.getTime() + 3_600_000);
  return shiftMonths(from, CYCLE_MONTHS[cycle] ?? 1);
}

/** The same day `months` later (or earlier), clamped to the end of a shorter month. */
export function shiftMonths(from: Date, months: number): Date {
  const d = new Date(from.getTime());
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() + months);
  const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, last));
  return d;
}

/** Monthly-equivalent of a recurring amount (for usage), rounded to 4 decimals. */
export function monthlyEquivalent(amount: Units, cycle: string): Units {
  if (cycle === HOURLY) return amount * 730n; // hours in an average month
  const months = BigInt(CYCLE_MONTHS[cycle] ?? 1);
  return (amount + months / 2n) / months;
}
