import { type Timestamp, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { displayMoney, parseMoney } from "@hb/platform/money";

/**
 * Money as pages show it, the one home for it (portal and admin panel): always with its currency,
 * and the currency's own decimals ("488 EUR" reads "488.00 EUR", "12.5" reads "12.50 EUR").
 * Digits past the currency's are shown only when the amount really has them: billing keeps four
 * decimals, and a balance of 488.0007 EUR after hourly charges is shown as 488.0007 EUR, because
 * rounding it to 488.00 would tell the customer a figure that is not on their ledger (and a partial
 * payment of "the whole balance" typed from the page would then fall short). An amount in the
 * API's exact form (a decimal string or a JSON number) is read exactly, never through a float.
 * Without a currency (an amount the caller could not place) it still gets two decimals.
 */
export function money(amount: string | number | undefined | null, currency?: string): string {
  if (amount === undefined || amount === null) return "—";
  const units = parseMoney(String(amount));
  if (units === undefined) return `${amount}${currency ? ` ${currency}` : ""}`;
  return displayMoney(units, currency);
}

/** "2026-11-23 15:40 UTC"; a dash when unset. */
export const when = (t: Timestamp | undefined) =>
  t ? `${timestampDate(t).toISOString().slice(0, 16).replace("T", " ")} UTC` : "—";

/** A calendar date (00:00 UTC) as YYYY-MM-DD. */
export const day = (t: Timestamp | undefined) => (t ? timestampDate(t).toISOString().slice(0, 10) : "");

/**
 * A date input's YYYY-MM-DD as 00:00 UTC of that day; undefined when empty or not a real calendar
 * date of the years 0001 to 9999 (what a Timestamp holds): 0000-01-01 and 2026-02-31 are not.
 */
export function dayStart(value: string): Timestamp | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || value.startsWith("0000")) return undefined;
  const d = new Date(`${value}T00:00:00Z`);
  // Date rolls an impossible day over (February 31 is March 3): only a date that reads back as typed.
  return Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value
    ? undefined
    : timestampFromDate(d);
}

/** Page numbers of a list: `page` 1-based, clamped to what exists. */
export function paginate<T>(items: T[], pageParam: unknown, size: number) {
  const pages = Math.max(1, Math.ceil(items.length / size));
  const n = Math.min(Math.max(1, Number.parseInt(String(pageParam ?? "1"), 10) || 1), pages);
  return { rows: items.slice((n - 1) * size, n * size), page: n, pages, total: items.length };
}
