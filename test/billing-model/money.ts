/**
 * The model's own arithmetic, written from the billing rules and not imported from the billing
 * service, so the test is an independent oracle: money as bigint ten-thousandths, calendar months
 * for cycles, and share(t, paidUntil, cycle).
 */
export type Units = bigint;

const SCALE = 10_000n;

/** "12.3400", "-5", "0.5" → ten-thousandths. */
export function units(text: string): Units {
  const m = /^(-)?(\d+)(?:\.(\d{1,4})\d*)?$/.exec(text.trim());
  if (!m) throw new Error(`not a money amount: ${text}`);
  const v = BigInt(m[2]) * SCALE + BigInt((m[3] ?? "").padEnd(4, "0"));
  return m[1] ? -v : v;
}

export function fmt(u: Units): string {
  const neg = u < 0n;
  const a = neg ? -u : u;
  return `${neg ? "-" : ""}${a / SCALE}.${(a % SCALE).toString().padStart(4, "0")}`;
}

export const MONTHS: Record<string, number> = {
  monthly: 1,
  quarterly: 3,
  semiannually: 6,
  annually: 12,
  biennially: 24,
};

/**
 * `n` months later (negative: earlier) on day `day` (`d`'s own by default), clamped to the end of
 * a shorter month.
 */
export function shiftMonths(d: Date, n: number, day = d.getUTCDate()): Date {
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth() + n;
  const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  const out = new Date(d.getTime());
  out.setUTCFullYear(y, m, Math.min(day, last));
  return out;
}

const isLeapYear = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/**
 * The same date and time a multiple of four years later, where the calendar of the `years` years
 * from `d` on (which of them have a leap day) is `d`'s own: a run that starts then meets the same
 * days as a run from `d`. Not a fixed 1461 days: across 2100, which has no leap day, those end on
 * the next day of the month (2097-01-29 + 1461 days is 2101-01-30), and from 2096 the next
 * calendar alike is 2104's.
 */
export function sameCalendarLater(d: Date, years = 3): Date {
  const y = d.getUTCFullYear();
  for (let k = 4; ; k += 4) {
    if (
      Array.from({ length: years }, (_, i) => i).every((i) => isLeapYear(y + i) === isLeapYear(y + k + i))
    ) {
      const out = new Date(d.getTime());
      out.setUTCFullYear(y + k);
      return out;
    }
  }
}

/**
 * One cycle on, on the term's anchor day (the day of month its first term started; `d`'s own by
 * default): the n-th due date is the anchor + n cycles, never the previous clamped date + 1.
 */
export const addCycle = (d: Date, cycle: string, anchorDay?: number): Date =>
  cycle === "hourly" ? new Date(d.getTime() + 3_600_000) : shiftMonths(d, MONTHS[cycle] ?? 1, anchorDay);

/**
 * Remaining cycles from t to paidUntil: whole cycles walking back from paidUntil, plus the
 * fraction of the cycle that contains t; 0 when t >= paidUntil. The cycles are the service's terms:
 * each starts whole cycles before paidUntil on the anchor day (clamped), never one cycle before a
 * clamped date (paidUntil's own day when no anchor is known).
 */
export function share(t: Date, paidUntil: Date, cycle: string, anchorDay?: number): number {
  if (t.getTime() >= paidUntil.getTime()) return 0;
  const months = MONTHS[cycle] ?? 1;
  let whole = 0;
  let end = paidUntil;
  for (let back = 1; ; back++) {
    const start = shiftMonths(paidUntil, -months * back, anchorDay);
    if (start.getTime() <= t.getTime())
      return whole + (end.getTime() - t.getTime()) / (end.getTime() - start.getTime());
    whole += 1;
    end = start;
  }
}

/** amount × factor, rounded half away from zero to a ten-thousandth. */
export function scale(amount: Units, factor: number): Units {
  const exact = Number(amount) * factor;
  return BigInt(Math.sign(exact) * Math.round(Math.abs(exact)));
}
