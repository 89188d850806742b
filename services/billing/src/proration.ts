import { CYCLE_MONTHS, shiftMonths, type Units } from "./money.ts";

/**
 * The share of the current billing period still to run, as parts per million, from `now` to the
 * next due date. The period starts one cycle before the due date.
 */
export function remainingShare(nextDue: Date, cycle: string, now: Date): bigint {
  const start = shiftMonths(nextDue, -(CYCLE_MONTHS[cycle] ?? 1));
  const total = nextDue.getTime() - start.getTime();
  const left = Math.min(Math.max(nextDue.getTime() - now.getTime(), 0), total);
  return BigInt(Math.round((left / total) * 1_000_000));
}

/** The prorated charge (positive) or credit (negative) of moving from one price to another. */
export function prorate(oldPrice: Units, newPrice: Units, share: bigint): Units {
  const diff = newPrice - oldPrice;
  const scaled = diff * share;
  // Round half away from zero to the ten-thousandth.
  const q = scaled / 1_000_000n;
  const r = scaled % 1_000_000n;
  if (r * 2n >= 1_000_000n) return q + 1n;
  if (r * 2n <= -1_000_000n) return q - 1n;
  return q;
}
