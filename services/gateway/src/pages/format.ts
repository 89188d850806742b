import { type Timestamp, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";

/** "2026-11-23 15:40 UTC"; a dash when unset. */
export const when = (t: Timestamp | undefined) =>
  t ? `${timestampDate(t).toISOString().slice(0, 16).replace("T", " ")} UTC` : "—";

/** A calendar date (00:00 UTC) as YYYY-MM-DD. */
export const day = (t: Timestamp | undefined) => (t ? timestampDate(t).toISOString().slice(0, 10) : "");

/** A date input's YYYY-MM-DD as 00:00 UTC of that day; undefined when empty or not a date. */
export function dayStart(value: string): Timestamp | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const d = new Date(`${value}T00:00:00Z`);
  return Number.isNaN(d.getTime()) ? undefined : timestampFromDate(d);
}

/** Page numbers of a list: `page` 1-based, clamped to what exists. */
export function paginate<T>(items: T[], pageParam: unknown, size: number) {
  const pages = Math.max(1, Math.ceil(items.length / size));
  const n = Math.min(Math.max(1, Number.parseInt(String(pageParam ?? "1"), 10) || 1), pages);
  return { rows: items.slice((n - 1) * size, n * size), page: n, pages, total: items.length };
}
