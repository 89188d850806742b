import { type Timestamp, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";

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
