/**
 * Group commit (issue 31 §2): statements that concurrent requests would each run in a transaction
 * of their own are queued and run together, in one transaction and one round trip (begin, the
 * statements, commit, written at once), so that a burst of pays costs one commit, one WAL flush and
 * one socket write instead of one each.
 *
 * What an answer means does not change: a statement's result is handed back only once the commit
 * of the transaction that ran it has answered COMMIT. When a statement of a group fails,
 * PostgreSQL rolls the whole group back (the commit answers ROLLBACK); then each statement is run
 * again alone, in its own transaction, and answers as it would have without the group: the
 * failing one with its own error, the others with their results. When the outcome of a group is
 * unknown (the connection broke before the commit answered), every statement of it fails with
 * that error and none is run again, as a lone statement's would.
 *
 * Only one group is in flight at a time: statements that arrive meanwhile wait for it and form the
 * next group. So the groups never wait on each other's locks, and a group's size follows the load:
 * one statement alone when requests come one at a time (then it runs as it did, autocommitted),
 * many under a burst. `orderOf` runs a group's statements in that order: the pays by payer, as the
 * orders' groups (transaction-group.ts) take them, so that two groups that lock several payers'
 * balances lock them in the same order and wait for each other rather than deadlock.
 *
 * For statements that are a whole operation each (a database function such as pay_from_credit)
 * and that may share a transaction: a statement must not depend on running alone (no
 * transaction control inside, no reliance on now() being its own).
 */

import type { Sql } from "@hb/platform";
import type { PendingQuery, Row } from "postgres";
import { retried } from "./shared.ts";

/** Sends one item's statement on `q` (the pool, or the group's connection). */
export type GroupStatement<I, R extends readonly Row[]> = (q: Sql, item: I) => PendingQuery<R>;

interface Waiting<I, R> {
  item: I;
  resolve: (rows: R) => void;
  reject: (err: unknown) => void;
}

export interface GroupCommitStats {
  /** Transactions that committed a group of two or more statements. */
  groups: number;
  /** Statements committed in those groups. */
  grouped: number;
  /** Statements run alone: no other one was waiting, or their group was rolled back. */
  alone: number;
  /** Groups rolled back because one of their statements failed (each then ran alone). */
  rolledBack: number;
}

export interface GroupCommit<I, R> {
  /** Runs the item's statement; settles once it has committed (or failed). */
  run(item: I): Promise<R>;
  readonly stats: GroupCommitStats;
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The largest group: its statements run one after another in PostgreSQL, so this bounds a group's duration. */
export const GROUP_MAX = 32;

export function groupCommit<I, R extends readonly Row[]>(
  sql: Sql,
  statement: GroupStatement<I, R>,
  { max = GROUP_MAX, orderOf }: { max?: number; orderOf?: (item: I) => string } = {},
): GroupCommit<I, R> {
  const queue: Waiting<I, R>[] = [];
  const stats: GroupCommitStats = { groups: 0, grouped: 0, alone: 0, rolledBack: 0 };
  let flushing = false;

  const alone = (w: Waiting<I, R>) => {
    stats.alone++;
    return retried(() => statement(sql, w.item).execute() as Promise<R>).then(w.resolve, w.reject);
  };

  async function together(group: Waiting<I, R>[]): Promise<void> {
    let conn: Awaited<ReturnType<Sql["reserve"]>>;
    try {
      conn = await sql.reserve();
    } catch {
      // No connection to group them on: each alone, which answers what the pool answers.
      await Promise.all(group.map(alone));
      return;
    }
    try {
      // The connection is the group's, without postgres.js's transaction wrapper (whose begin is
      // a round trip of its own): begin, the statements and commit go out in one write.
      const q = conn as unknown as Sql;
      const sent: Promise<unknown>[] = [conn`begin`.execute()];
      try {
        for (const w of group) sent.push(statement(q, w.item).execute());
      } catch {
        // A statement could not even be sent (its parameters): the others are run alone.
        for (const p of sent) p.catch(() => {});
        await conn`rollback`.catch(() => {});
        stats.rolledBack++;
        await Promise.all(group.map(alone));
        return;
      }
      const committed = conn`commit`.execute();
      const settled = await Promise.allSettled(sent);
      let done: { command: string };
      try {
        done = await committed;
      } catch (err) {
        // The commit's outcome is unknown: nothing may be run again (it may have committed).
        for (const w of group) w.reject(err);
        return;
      }
      if (settled[0].status === "rejected") {
        // Without the begin each statement ran in a transaction of its own: their outcomes are
        // not the group's, so none is run again.
        for (const w of group) w.reject(settled[0].reason);
        return;
      }
      if (done.command === "COMMIT" && settled.every((s) => s.status === "fulfilled")) {
        stats.groups++;
        stats.grouped += group.length;
        for (const [i, w] of group.entries()) w.resolve((settled[i + 1] as PromiseFulfilledResult<R>).value);
        return;
      }
      // A statement failed, so PostgreSQL rolled the group back (the commit answered ROLLBACK):
      // nothing of it happened. Each runs again alone.
      stats.rolledBack++;
    } finally {
      conn.release();
    }
    await Promise.all(group.map(alone));
  }

  async function flush(): Promise<void> {
    while (queue.length > 0) {
      const group = queue.splice(0, max);
      if (orderOf) group.sort((a, b) => compare(orderOf(a.item), orderOf(b.item)));
      try {
        if (group.length === 1) await alone(group[0]);
        else await together(group);
      } catch (err) {
        // Not expected (each path settles its own); never leave a request waiting.
        for (const w of group) w.reject(err);
      }
    }
    flushing = false;
  }

  return {
    stats,
    run(item) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        if (flushing) return;
        flushing = true;
        // After the requests that arrived with this one (the same read of the socket) are queued too.
        setImmediate(() => void flush());
      });
    },
  };
}
