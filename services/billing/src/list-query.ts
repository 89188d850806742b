/**
 * Billing's one way to answer a list request: a page of rows and the list's total. The spec's
 * paging numbers live in @hb/platform (paging.ts); this builds the LIMIT/OFFSET and the count.
 */
import { pageWindow, type Sql } from "@hb/platform";

type Fragment = ReturnType<Sql>;

export interface ListQuery {
  /** `select …` up to the FROM. */
  select: Fragment;
  /** `from … where …`: what is listed, and what is counted. */
  from: Fragment;
  /** The order of the rows, which a page needs to be stable: end it with a unique column. */
  orderBy: Fragment;
}

/**
 * Reads one page and counts the list. The two statements go at once on two pool connections, so a
 * page costs one round trip's time. `total`, when given, replaces the count (a list that reads
 * its totals anyway, by status).
 */
export async function listPage<Row extends object>(
  sql: Sql,
  req: { page: number; limit: number },
  defaultLimit: number,
  q: ListQuery,
  total?: Promise<number>,
): Promise<{ rows: Row[]; total: number }> {
  const w = pageWindow(req.page, req.limit, defaultLimit);
  const [rows, n] = await Promise.all([
    sql<Row[]>`${q.select} ${q.from} order by ${q.orderBy} limit ${w.limit} offset ${w.offset}`,
    total ?? sql<{ n: number }[]>`select count(*)::int as n ${q.from}`.then(([r]) => r.n),
  ]);
  return { rows: [...rows], total: n };
}
