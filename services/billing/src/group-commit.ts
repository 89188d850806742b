/**
 * Group commit (issue 31 §2): operations that concurrent requests would each run as a statement of
 * their own (a pay: pay_from_credit) are queued, and those waiting together run as one statement,
 * the operation called once per item in their order (`unnest … with ordinality` joined lateral to
 * the function). One statement is one implicit transaction: a burst of pays costs one round trip,
 * one commit, one WAL flush and one socket write instead of one of each per pay, and the items see
 * each other's writes in order as if run one after another (a volatile function's statements
 * each see what the calls before it wrote).
 *
 * What an answer means does not change: an item's result is handed back only once the statement
 * that ran it has answered, and so committed. When the statement fails on the server (one item's
 * error fails it whole, and nothing of it happened), each item runs again alone and answers as it
 * would have without the group: the failing one with its own error, the others with their results.
 * When the outcome is unknown (the connection broke before the answer), every item of the group
 * fails with that error and none runs again, as a lone statement's would.
 *
 * A group's statement answers in one row, the results gathered by an aggregate: a statement that
 * fails after it has sent rows leaves postgres.js 3.4's row count on its connection unreset, and
 * the next query there resolves with holes before its rows (porsager/postgres#1119, #1181, still
 * open); an aggregate sends nothing before every item has run. (This module's property test
 * found it, with a statement that answered a row per item.)
 *
 * Only one group is in flight at a time: items that arrive meanwhile wait for it and form the next
 * group. So a group's size follows the load: one item alone when requests come one at a time,
 * many under a burst. `orderOf` runs a group's items in that order: the pays by payer, as the
 * orders' groups (transaction-group.ts) take them, so that two groups that lock several payers'
 * balances lock them in the same order and wait for each other rather than deadlock.
 */
import type { Sql } from "@hb/platform";
import postgres from "postgres";
import { retried } from "./shared.ts";
import { byKey, waitTogether } from "./wait-together.ts";

/**
 * Runs the items as one statement on `q` and answers one result per item, in the items' order (a
 * statement of one item when an item runs alone).
 */
export type GroupStatement<I, R> = (q: Sql, items: readonly I[]) => Promise<readonly R[]>;

interface Waiting<I, R> {
  item: I;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

export interface GroupCommitStats {
  /** Statements that committed a group of two or more items. */
  groups: number;
  /** Items committed in those groups. */
  grouped: number;
  /** Items run alone: no other one was waiting, or their group's statement failed. */
  alone: number;
  /** Groups whose statement failed on the server (each item then ran alone). */
  failed: number;
}

export interface GroupCommit<I, R> {
  /** Runs the item; settles once the statement that ran it has committed (or failed). */
  run(item: I): Promise<R>;
  readonly stats: GroupCommitStats;
}

/** The largest group: its items run one after another in PostgreSQL, so this bounds a group's duration. */
export const GROUP_MAX = 32;

export function groupCommit<I, R>(
  sql: Sql,
  statement: GroupStatement<I, R>,
  { max = GROUP_MAX, orderOf }: { max?: number; orderOf?: (item: I) => string } = {},
): GroupCommit<I, R> {
  const stats: GroupCommitStats = { groups: 0, grouped: 0, alone: 0, failed: 0 };

  const alone = (w: Waiting<I, R>) => {
    stats.alone++;
    return retried(() => statement(sql, [w.item])).then(([r]) => w.resolve(r), w.reject);
  };

  async function together(group: Waiting<I, R>[]): Promise<void> {
    let results: readonly R[];
    try {
      results = await statement(
        sql,
        group.map((w) => w.item),
      );
    } catch (err) {
      // Only an error PostgreSQL answered says that the statement did not commit.
      if (!(err instanceof postgres.PostgresError)) {
        for (const w of group) w.reject(err);
        return;
      }
      stats.failed++;
      await Promise.all(group.map(alone));
      return;
    }
    if (results.length !== group.length) {
      const err = new Error(`a group of ${group.length} was answered ${results.length} results`);
      for (const w of group) w.reject(err);
      return;
    }
    stats.groups++;
    stats.grouped += group.length;
    for (const [i, w] of group.entries()) w.resolve(results[i]);
  }

  const order = orderOf && byKey<Waiting<I, R>>((w) => orderOf(w.item));
  const enqueue = waitTogether<Waiting<I, R>>(max, async (group) => {
    if (order) group.sort(order);
    if (group.length === 1) await alone(group[0]);
    else await together(group);
  });

  return {
    stats,
    run(item) {
      return new Promise<R>((resolve, reject) => enqueue({ item, resolve, reject }));
    },
  };
}
