import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Caller, CallerSchema } from "@hb/contracts/hb/platform/v1/caller_pb";
import { apiError, badRequest, isUuid, type Sql, type TxSql } from "@hb/platform";

export interface CallerIds {
  customerId: string;
  personId: string;
  /** The account's currency; empty only for internal callers that did not say. */
  currency: string;
}

/** Every customer-facing call must say whom it is for. */
export function callerOf(caller: Caller | MessageInitShape<typeof CallerSchema> | undefined): CallerIds {
  if (!caller?.customerId || !caller.personId) throw apiError("UNAUTHORIZED", "caller missing");
  if (!isUuid(caller.customerId) || !isUuid(caller.personId))
    throw badRequest("caller", "caller.customer_id and caller.person_id must be UUIDs");
  return { customerId: caller.customerId, personId: caller.personId, currency: caller.currency ?? "" };
}

/** Deadlocks and serialisation failures: PostgreSQL rolled the whole transaction back, so it is safe to run again. */
const RETRYABLE = new Set(["40P01", "40001"]);

/**
 * `sql.begin` that runs the transaction again (up to 4 times, with a short jittered pause) when
 * PostgreSQL aborts it for a deadlock or a serialisation failure. Two money operations that lock
 * the same rows in different orders (paying an upgrade invoice while cancelling the upgrade) then
 * both finish instead of one answering 500.
 */
export async function transact<T>(sql: Sql, fn: (tx: TxSql) => Promise<T>): Promise<T> {
  return retried(() => sql.begin(fn) as Promise<T>);
}

/**
 * `transact` in two round trips fewer: the begin goes with the transaction's first statements, on a
 * connection of its own (`sql.reserve`; `sql.begin` waits for the begin's answer before the first
 * statement is sent), and the last statement with the commit (`fn` starts it without waiting and
 * hands it to `withCommit`). Had that one failed, PostgreSQL answers the commit by rolling the
 * whole transaction back (a failed statement aborts it) and this throws its error: a result is
 * only returned when every statement and the commit succeeded. Whatever fails rolls back; a commit
 * answered as a rollback throws. For handlers whose path takes no savepoint (the connection is
 * not a postgres.js transaction, so it has none).
 */
export async function transactPipelined<T>(
  sql: Sql,
  fn: (tx: TxSql, withCommit: (last: Promise<unknown>) => void) => Promise<T>,
): Promise<T> {
  return retried(async () => {
    const conn = await sql.reserve();
    let last: Promise<unknown> = Promise.resolve();
    try {
      const begun = conn`begin`.execute();
      // Read below; until then a failure must not count as unhandled (fn's statements fail too).
      begun.catch(() => {});
      // The same tagged-template interface, without savepoint (see above).
      const tx = conn as unknown as TxSql;
      const result = await fn(tx, (q) => {
        q.catch(() => {});
        last = q;
      });
      await begun;
      const done = await conn`commit`;
      await last;
      if (done.command !== "COMMIT") throw new Error(`the transaction ended in ${done.command}, not COMMIT`);
      return result;
    } catch (err) {
      await conn`rollback`.catch(() => {});
      throw err;
    } finally {
      conn.release();
    }
  });
}

/** Statements a transaction sends with its commit, not yet sent. */
const atCommit = new WeakMap<TxSql, (() => Promise<unknown>)[]>();

/**
 * In a transactPipelined transaction whose function hands what collectAtCommit(tx) returns to withCommit: lets a
 * step deep in the path (the order's event) leave its statement to be sent with the commit, after
 * every answer the transaction waits for, so that it costs no round trip of its own. Elsewhere the
 * statement is sent and waited for at once, so the steps shared with other paths (paying a
 * proforma) behave as they did there.
 */
export async function sentWithCommit(tx: TxSql, send: () => Promise<unknown>): Promise<void> {
  const pending = atCommit.get(tx);
  if (pending) pending.push(send);
  else await send();
}

/**
 * Starts collecting tx's sentWithCommit statements; the function returned sends them (call it
 * right before the last statement, in the same tick) and settles with all of them.
 */
export function collectAtCommit(tx: TxSql): () => Promise<unknown> {
  const pending: (() => Promise<unknown>)[] = [];
  atCommit.set(tx, pending);
  return () => Promise.all(pending.map((send) => send()));
}

/** A deadlock or serialisation failure: PostgreSQL rolled the transaction (or savepoint) back; safe to run again. */
export function isRetryable(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" && RETRYABLE.has(code);
}

/** Runs `run` again (up to 4 times in all) when PostgreSQL rolled it back for a deadlock or a serialisation failure. */
export async function retried<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (attempt >= 4 || !isRetryable(err)) throw err;
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * attempt));
    }
  }
}

/** A unique-index violation on the named index (PostgreSQL 23505). */
export function isUniqueViolation(err: unknown, constraint: string): boolean {
  const e = err as { code?: unknown; constraint_name?: unknown };
  return e.code === "23505" && e.constraint_name === constraint;
}
