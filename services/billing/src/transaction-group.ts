/**
 * Group commit for whole transactions (issue 31 §2, the orders): transactions that concurrent
 * requests would each run on a connection of their own (transactPipelined) are queued, and those
 * waiting together run one after another in one transaction, each inside a savepoint of its own,
 * then commit once. A request's answer is handed back only once that commit answered COMMIT, so a
 * 201 still means its rows are there.
 *
 * Each transaction's last statements (withCommit: the order's event and the key's answer) are not
 * waited for before the next one starts: they go out in the same write as the next one's
 * savepoint and first reads, so a transaction in a group costs its reads and its writes, and the
 * begin and the commit are shared. What can fail, and what it costs the others:
 * - A transaction that throws (a refusal, a statement's error) is rolled back to its savepoint and
 *   answered with its error; what the others did stays. A deadlock or serialisation failure runs
 *   it again, later in the group (up to 4 attempts, as transactPipelined).
 * - A transaction whose last statements fail is found when the next one fails (its statements
 *   meet the aborted savepoint) or at the group's end: the group is rolled back to its savepoint,
 *   which undoes it and every transaction after it; it is answered with its error and those after
 *   it run again.
 * - The connection breaks: every transaction of the group not yet answered fails with that error
 *   and none runs again (the commit may have happened).
 *
 * A transaction alone in the queue runs as before (transactPipelined). Groups run one at a time,
 * and a group runs its transactions in the order of their payer, so that two groups, or a group
 * and a group of pays (group-commit.ts, same order), take the payers' balances in the same order
 * and wait for each other rather than deadlock.
 *
 * The function must not take savepoints itself (the connection is not a postgres.js transaction,
 * as with transactPipelined), and must send no statement after it has settled: a statement sent
 * later is refused.
 */
import { AsyncResource } from "node:async_hooks";
import type { Sql, TxSql } from "@hb/platform";
import { isRetryable, transactPipelined } from "./shared.ts";
import { byKey, waitTogether } from "./wait-together.ts";

export type GroupedWork<T> = (tx: TxSql, withCommit: (last: Promise<unknown>) => void) => Promise<T>;

interface Waiting {
  work: GroupedWork<unknown>;
  /** Transactions run in this order within a group (the payer's id). */
  order: string;
  attempts: number;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export interface TransactionGroupStats {
  /** Groups committed (two or more transactions each). */
  groups: number;
  /** Transactions committed in those groups. */
  grouped: number;
  /** Transactions run alone (nothing else was waiting). */
  alone: number;
  /** Transactions rolled back to their savepoint (refused, failed, or run again after one before them failed). */
  rolledBack: number;
}

export interface TransactionGroup {
  run<T>(work: GroupedWork<T>, order: string): Promise<T>;
  readonly stats: TransactionGroupStats;
}

/**
 * The most transactions in one group. Each holds its locks until the group commits, and each that
 * wrote takes a subtransaction id: PostgreSQL keeps 64 per transaction in shared memory before it
 * must look them up on disk, for every other session's snapshot too.
 */
export const TRANSACTION_GROUP_MAX = 24;

/** The connection, as a statement function that refuses statements once its transaction has settled. */
function guarded(conn: TxSql): { tx: TxSql; close: () => void } {
  let closed = false;
  const refuse = () => {
    if (closed) throw new Error("a statement was sent after its grouped transaction settled");
  };
  const tx = new Proxy(conn, {
    apply(target, self, args) {
      refuse();
      return Reflect.apply(target, self, args);
    },
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        refuse();
        return Reflect.apply(value, target, args);
      };
    },
  });
  return {
    tx,
    close: () => {
      closed = true;
    },
  };
}

const byPayer = byKey<Waiting>((w) => w.order);

export function transactionGroup(sql: Sql, max = TRANSACTION_GROUP_MAX): TransactionGroup {
  const stats: TransactionGroupStats = { groups: 0, grouped: 0, alone: 0, rolledBack: 0 };

  async function alone(w: Waiting): Promise<void> {
    stats.alone++;
    await transactPipelined(sql, w.work).then(w.resolve, w.reject);
  }

  async function together(group: Waiting[]): Promise<void> {
    const conn = await sql.reserve();
    const q = conn as unknown as TxSql;
    interface Ran {
      w: Waiting;
      result: unknown;
      tail: Promise<unknown>;
      savepoint: string;
    }
    let ran: Ran[] = [];
    let todo = [...group].sort(byPayer);
    let n = 0;
    /** The first transaction whose last statements failed, and its error. */
    const failedTail = async () => {
      const settled = await Promise.allSettled(ran.map((r) => r.tail));
      const i = settled.findIndex((s) => s.status === "rejected");
      return i < 0 ? undefined : { i, err: (settled[i] as PromiseRejectedResult).reason };
    };
    /** Undoes ran[i] and everything after it: ran[i] is answered with err, the rest run again first. */
    const undoFrom = async (i: number, err: unknown) => {
      await q.unsafe(`rollback to savepoint ${ran[i].savepoint}`);
      stats.rolledBack += ran.length - i;
      ran[i].w.reject(err);
      todo = [...ran.slice(i + 1).map((r) => r.w), ...todo];
      ran = ran.slice(0, i);
    };
    /** The transaction being run (in neither list meanwhile). */
    let current: Waiting | undefined;
    try {
      const begun = q`begin`.execute();
      begun.catch(() => {});
      for (;;) {
        while (todo.length > 0) {
          const w = todo.shift() as Waiting;
          current = w;
          const savepoint = `g${n++}`;
          q.unsafe(`savepoint ${savepoint}`)
            .execute()
            .catch(() => {});
          const { tx, close } = guarded(q);
          let tail: Promise<unknown> = Promise.resolve();
          let outcome: { ok: true; result: unknown } | { ok: false; err: unknown };
          try {
            const result = await w.work(tx, (last) => {
              last.catch(() => {});
              tail = last;
            });
            outcome = { ok: true, result };
          } catch (err) {
            outcome = { ok: false, err };
          } finally {
            // Before anything is rolled back: a statement its work sends late would outlive the rollback.
            close();
          }
          if (outcome.ok) {
            ran.push({ w, result: outcome.result, tail, savepoint });
            current = undefined;
            continue;
          }
          // A transaction before it whose last statements failed aborted the savepoints after it.
          const before = await failedTail();
          if (before) {
            todo.unshift(w);
            current = undefined;
            await undoFrom(before.i, before.err);
            continue;
          }
          await q.unsafe(`rollback to savepoint ${savepoint}`);
          stats.rolledBack++;
          current = undefined;
          if (isRetryable(outcome.err) && ++w.attempts < 4) todo.push(w);
          else w.reject(outcome.err);
        }
        const failed = await failedTail();
        if (!failed) break;
        await undoFrom(failed.i, failed.err);
      }
      // Without the begin, the statements ran each in its own transaction: not the group's.
      await begun;
      if (ran.length === 0) {
        await q`rollback`;
        return;
      }
      const done = await q`commit`;
      if (done.command !== "COMMIT")
        throw new Error(`the group's transaction ended in ${done.command}, not COMMIT`);
      stats.groups++;
      stats.grouped += ran.length;
      for (const r of ran) r.w.resolve(r.result);
    } catch (err) {
      // The connection broke, or the commit did not commit: nothing not yet answered may run again.
      await q`rollback`.catch(() => {});
      for (const w of [...(current ? [current] : []), ...ran.map((r) => r.w), ...todo]) w.reject(err);
    } finally {
      conn.release();
    }
  }

  const enqueue = waitTogether<Waiting>(max, (group) =>
    group.length === 1 ? alone(group[0]) : together(group),
  );

  return {
    stats,
    run<T>(work: GroupedWork<T>, order: string): Promise<T> {
      return new Promise<T>((resolve, reject) =>
        enqueue({
          // The work runs in its caller's async context (what it notes for the call's hand-over).
          work: AsyncResource.bind(work),
          order,
          attempts: 0,
          resolve: resolve as (v: unknown) => void,
          reject,
        }),
      );
    },
  };
}
