import { CYCLE_MONTHS, shiftMonths, type Units } from "./money.ts";

const PPM = 1_000_000n;

/**
 * How many billing cycles are still paid for at `now`, in parts per million: the whole cycles
 * between `now` and `paidUntil` plus the share left of the cycle `now` falls in. A service paid two
 * years ahead on an annual cycle is close to 2,000,000; one whose paid time has run out is 0.
 *
 * The cycles are the service's own terms: each start is `paidUntil` less whole cycles, on the
 * service's anchor day clamped to its month (money.ts addCycle), as its due dates were made. Walked
 * back from a clamped date instead (the day of `paidUntil`), a term anchored on the 31st that ends
 * Apr 30 would start Mar 30, a day early, and the share of it left would read short: 0.989 of a
 * quarter at the first instant of a term from Nov 29 to Feb 28. Without an anchor (a first term),
 * `paidUntil`'s own day is the anchor.
 */
export function remainingShare(paidUntil: Date, cycle: string, now: Date, anchorDay?: number): bigint {
  const months = CYCLE_MONTHS[cycle] ?? 1;
  if (now.getTime() >= paidUntil.getTime()) return 0n;
  let whole = 0n;
  let end = paidUntil;
  // Bounded: nobody pays more than a few hundred cycles ahead.
  for (let i = 0; i < 10_000; i++) {
    const start = shiftMonths(paidUntil, -months * (i + 1), anchorDay);
    if (start.getTime() <= now.getTime()) {
      const part = (end.getTime() - now.getTime()) / (end.getTime() - start.getTime());
      return whole * PPM + BigInt(Math.round(part * 1_000_000));
    }
    whole += 1n;
    end = start;
  }
  return whole * PPM;
}

/**
 * The prorated charge (positive) or credit (negative) of moving from one price per cycle to
 * another for `share` cycles. A charge rounds half up to the ten-thousandth; a credit rounds
 * towards zero, so rounding never gives back more than was paid.
 */
export function prorate(oldPrice: Units, newPrice: Units, share: bigint): Units {
  const scaled = (newPrice - oldPrice) * share;
  const q = scaled / PPM;
  const r = scaled % PPM;
  if (r * 2n >= PPM) return q + 1n;
  return q;
}

/**
 * The unused part of `paid`, which bought the period [periodStart, paidUntil], at `now`: what
 * giving the thing up returns. Rounded down, never negative, never more than was paid.
 */
export function unusedValue(paid: Units, periodStart: Date, paidUntil: Date, now: Date): Units {
  const total = BigInt(paidUntil.getTime() - periodStart.getTime());
  const left = BigInt(Math.max(0, paidUntil.getTime() - Math.max(now.getTime(), periodStart.getTime())));
  if (paid <= 0n || total <= 0n || left <= 0n) return 0n;
  const value = (paid * left) / total;
  return value > paid ? paid : value;
}
