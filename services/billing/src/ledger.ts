import { apiError, type TxSql } from "@hb/platform";
import { lockBalance } from "./account-currency.ts";
import { clock } from "./clock.ts";
import { formatMoney, min, money, type Units } from "./money.ts";

export interface Movement {
  personId: string;
  customerId: string;
  amount: Units;
  kind: "credit_added" | "credit_removed" | "payment" | "refund" | "hourly_charge";
  /** Text, or an expression of the statement (a number the same round trip draws). */
  description: string | ReturnType<TxSql>;
  documentId?: string;
  /** The staff member who made the movement for the customer (a confirmed bank transfer, a desk adjustment). */
  staffId?: string;
  /** The identity that made it by hand ('admin-panel', 'admin'), from the caller's certificate. */
  operator?: string;
}

/**
 * The CTEs `moved` (the balance row after the move) and `entry` (the ledger row, with
 * `balance_after`) of one movement, for a statement that does more in the same round trip. The
 * balance never goes below zero: when it would, both are empty.
 */
export function movementCtes(tx: TxSql, m: Movement) {
  const amount = formatMoney(m.amount);
  return tx`
    moved as (
      update balances set balance = balance + ${amount}::numeric
      where person_id = ${m.personId} and balance + ${amount}::numeric >= 0
      returning balance, currency),
    entry as (
      insert into ledger (person_id, customer_id, amount, balance_after, kind, description, document_id, currency, created_at, staff_id, operator)
      select ${m.personId}, ${m.customerId}, ${amount}::numeric, moved.balance, ${m.kind}, ${m.description},
             ${m.documentId ?? null}, moved.currency, ${clock.now()}, ${m.staffId ?? null}, ${m.operator ?? null}
      from moved
      returning id, balance_after)`;
}

export const insufficientCredit = () =>
  apiError("BAD_REQUEST", "Insufficient credit balance", {
    violations: [{ field: "amount", message: "exceeds the credit balance" }],
  });

/**
 * Appends a ledger entry and moves the balance in one statement; refuses to go below zero. Call
 * after lockBalance: the row is locked, so the check and the move see the same balance.
 */
export async function move(tx: TxSql, m: Movement): Promise<Units> {
  return (await moveEntry(tx, m)).balance;
}

/** `move`, answering also the ledger entry's id (a transaction id the caller shows). */
export async function moveEntry(tx: TxSql, m: Movement): Promise<{ id: string; balance: Units }> {
  const [row] = await tx<{ id: string; balance_after: string }[]>`
    with ${movementCtes(tx, m)}
    select id::text, balance_after::text from entry`;
  if (!row) throw insufficientCredit();
  return { id: row.id, balance: money(row.balance_after) };
}

export async function balanceOf(tx: TxSql, personId: string): Promise<Units> {
  const [row] = await tx<{ balance: string }[]>`select balance from balances where person_id = ${personId}`;
  return row ? money(row.balance) : 0n;
}

/**
 * Gives back up to `amount` of what was paid on `documentIds` (earlier ids first), to the people
 * who paid them: never more than a person paid on a document minus what was already given back to
 * them on it. Credit therefore only ever returns to the balance it came from. Returns the amount
 * actually refunded (less than asked when less was paid).
 */
export async function refundPayments(
  tx: TxSql,
  documentIds: string[],
  amount: Units,
  description: string,
): Promise<Units> {
  if (amount <= 0n || documentIds.length === 0) return 0n;
  const rows = await tx<
    { document_id: string; person_id: string; customer_id: string; currency: string; refundable: string }[]
  >`
    select document_id, person_id, customer_id, currency, refundable::text from (
      select document_id, person_id, min(customer_id::text) as customer_id, min(currency) as currency,
             -coalesce(sum(amount) filter (where kind = 'payment'), 0)
               - coalesce(sum(amount) filter (where kind = 'refund'), 0) as refundable
      from ledger where document_id = any(${documentIds}::uuid[]) and kind in ('payment', 'refund')
      group by document_id, person_id) r
    order by array_position(${documentIds}::uuid[], document_id), r.refundable desc, person_id`;
  let left = amount;
  for (const r of rows) {
    const take = min(left, money(r.refundable));
    if (take <= 0n) continue;
    await lockBalance(tx, r.person_id, r.customer_id, r.currency);
    await move(tx, {
      personId: r.person_id,
      customerId: r.customer_id,
      amount: take,
      kind: "refund",
      description,
      documentId: r.document_id,
    });
    left -= take;
    if (left === 0n) break;
  }
  return amount - left;
}
