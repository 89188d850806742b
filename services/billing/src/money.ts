/**
 * Exact money: amounts are decimal strings with up to 4 decimals, held as bigint ten-thousandths
 * for arithmetic. Binary floating point never touches a sum; `toNumber` exists only for the spec's
 * numeric JSON fields at the edge.
 */
const SCALE = 10_000n;
const pattern = /^(-)?(\d{1,14})(?:\.(\d{1,4}))?$/;

export type Units = bigint;

export function parseMoney(text: string): Units | undefined {
  const m = pattern.exec(text.trim());
  if (!m) return undefined;
  const units = BigInt(m[2]) * SCALE + BigInt((m[3] ?? "").padEnd(4, "0"));
  return m[1] ? -units : units;
}

export function money(text: string): Units {
  const v = parseMoney(text);
  if (v === undefined) throw new Error(`not a money amount: ${text}`);
  return v;
}

/** 4-decimal string, as the spec's `amount` fields are written. */
export function formatMoney(units: Units): string {
  const neg = units < 0n;
  const abs = neg ? -units : units;
  return `${neg ? "-" : ""}${abs / SCALE}.${(abs % SCALE).toString().padStart(4, "0")}`;
}

/** For the spec's numeric fields only (document.total, credit_balance, …). */
export const toNumber = (units: Units): number => Number(formatMoney(units));

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
export const isCycle = (c: string) => c in CYCLE_MONTHS || c === HOURLY;

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
