/**
 * Staff money writes (a desk credit adjustment, a bank-transfer confirmation) that cannot double,
 * lie or outlive their caller:
 * - each carries an idempotency key (the admin panel's audit entry id), claimed first in its
 *   transaction in `staff_writes`; the same key again waits for the first and answers its result;
 * - the transaction is bounded by the call's deadline (statement and lock timeouts), so billing
 *   never commits a write long after its caller reported it lost;
 * - `settle` answers a key's fate for a caller that lost the answer, fencing a key that has not
 *   committed so it never can;
 * - who acted is taken from the caller's certificate: the admin panel names its signed-in staff
 *   member, the admin command is recorded as itself.
 */
import type { HandlerContext } from "@connectrpc/connect";
import { apiError, badRequest, callerOfCall, isUuid, msLeftOfCall, type Sql, type TxSql } from "@hb/platform";
import { money, type Units } from "./money.ts";
import { transact } from "./shared.ts";

export interface StaffActor {
  /** The staff member recorded on the ledger entry; null for the admin command. */
  staffId: string | null;
  /** The identity that made the write ('admin-panel', 'admin'). */
  operator: string;
}

/**
 * Who makes this staff write. Only the admin panel speaks for a staff member (its session signed
 * them in); the admin command records itself, so `--staff <colleague>` cannot put a colleague's
 * name on a ledger entry.
 */
export function staffActor(ctx: HandlerContext | undefined, staffId: string): StaffActor {
  const caller = callerOfCall(ctx);
  if (caller === "admin") return { staffId: null, operator: "admin" };
  if (!isUuid(staffId)) throw badRequest("staff_id", "staff_id must name the staff member acting");
  return { staffId, operator: caller ?? "unverified" };
}

/**
 * The staff principal, checked by billing itself (as auth checks its own staff writes): the staff
 * member the admin panel names must exist in auth (`permissions` as auth's AccountLookup answers
 * them, undefined for no such staff member) and hold `needed`. Callers skip it for the admin
 * command, the operator, which names no staff member.
 */
export function staffMayWrite(permissions: string[] | undefined, needed: readonly string[]): void {
  if (!permissions) throw apiError("UNAUTHORIZED", "Unknown staff member");
  const missing = needed.find((p) => !permissions.includes(p));
  if (missing) throw apiError("FORBIDDEN", `Staff permission ${missing} is required`);
}

/** The first ledger entry a key made, as the write's answer is rebuilt from it. */
export interface KeyedEntry {
  ledgerId: string;
  personId: string;
  amount: Units;
  balanceAfter: Units;
}

/** Runs `write` once per key, in a transaction bounded by the call's deadline. */
export async function keyedStaffWrite<T>(
  sql: Sql,
  ctx: HandlerContext | undefined,
  key: string | undefined,
  write: (tx: TxSql) => Promise<{ ledgerId: string; result: T }>,
  replay: (tx: TxSql, first: KeyedEntry) => Promise<T>,
): Promise<T> {
  return bounded(async () =>
    transact(sql, async (tx) => {
      await boundByCall(tx, ctx);
      if (!key) return (await write(tx)).result;
      // Claimed first: a concurrent write with the same key (or a settle) waits here for this
      // transaction, and then sees its outcome.
      const [claimed] = await tx`
        insert into staff_writes (idempotency_key, state) values (${key}, 'committed')
        on conflict do nothing returning idempotency_key`;
      if (!claimed) return replay(tx, await firstOf(tx, key));
      const done = await write(tx);
      await tx`update staff_writes set ledger_id = ${done.ledgerId} where idempotency_key = ${key}`;
      return done.result;
    }),
  );
}

async function firstOf(tx: TxSql, key: string): Promise<KeyedEntry> {
  const [row] = await tx<
    { state: string; ledger_id: string | null; person_id: string; amount: string; balance_after: string }[]
  >`select w.state, w.ledger_id::text, l.person_id, l.amount::text, l.balance_after::text
    from staff_writes w left join ledger l on l.id = w.ledger_id where w.idempotency_key = ${key}`;
  if (!row?.ledger_id) {
    throw apiError(
      "CONFLICT",
      "This write was given up (its answer was lost and it was settled as not made); make it again as a new one",
    );
  }
  return {
    ledgerId: row.ledger_id,
    personId: row.person_id,
    amount: money(row.amount),
    balanceAfter: money(row.balance_after),
  };
}

/** The key reused for a different write is the caller's mistake, never a silent replay. */
export function sameWrite(first: KeyedEntry, personId: string, amount: Units): void {
  if (first.personId !== personId || first.amount !== amount)
    throw apiError("CONFLICT", "This idempotency key was used for a different write");
}

/**
 * A key's fate. Committed: its entry. Otherwise an 'abandoned' row is inserted under the key (after
 * waiting for a transaction that holds it), so the write it names can never commit afterwards.
 */
export async function settleStaffWrite(
  sql: Sql,
  ctx: HandlerContext | undefined,
  key: string,
): Promise<{ committed: false } | ({ committed: true; currency: string; customerId: string } & KeyedEntry)> {
  return bounded(async () =>
    transact(sql, async (tx) => {
      await boundByCall(tx, ctx);
      const [fenced] = await tx`
        insert into staff_writes (idempotency_key, state) values (${key}, 'abandoned')
        on conflict do nothing returning idempotency_key`;
      if (fenced) return { committed: false as const };
      const [row] = await tx<
        {
          ledger_id: string | null;
          person_id: string;
          customer_id: string;
          amount: string;
          balance_after: string;
          currency: string;
        }[]
      >`select w.ledger_id::text, l.person_id, l.customer_id, l.amount::text, l.balance_after::text, l.currency
        from staff_writes w left join ledger l on l.id = w.ledger_id where w.idempotency_key = ${key}`;
      if (!row?.ledger_id) return { committed: false as const };
      return {
        committed: true as const,
        ledgerId: row.ledger_id,
        personId: row.person_id,
        amount: money(row.amount),
        balanceAfter: money(row.balance_after),
        currency: row.currency,
        customerId: row.customer_id,
      };
    }),
  );
}

/**
 * Bounds every statement and lock wait of the transaction by the time the caller still waits, so
 * a write held behind a lock is cancelled by its own deadline instead of committing after its
 * caller reported it lost. (The key's fence makes a late commit impossible anyway; this makes the
 * usual case end quickly, and settle's wait short.)
 */
async function boundByCall(tx: TxSql, ctx: HandlerContext | undefined): Promise<void> {
  const left = msLeftOfCall(ctx);
  if (left === undefined) return;
  if (left <= 0) throw deadlinePassed();
  const ms = String(Math.max(1, Math.floor(left)));
  await tx`select set_config('statement_timeout', ${ms}, true), set_config('lock_timeout', ${ms}, true)`;
}

const deadlinePassed = () =>
  apiError("SERVICE_UNAVAILABLE", "The call's deadline passed before the write was made");

/** PostgreSQL's lock timeout (55P03) and statement timeout (57014) are the call's deadline, not a fault. */
async function bounded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === "55P03" || code === "57014") throw deadlinePassed();
    throw err;
  }
}
