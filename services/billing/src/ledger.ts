import { apiError, type TxSql } from "@hb/platform";
import { formatMoney, money, type Units } from "./money.ts";

/**
 * Locks the person's balance row for the rest of the transaction (creating it at zero when
 * missing). Every movement of a person's money goes through here, so concurrent payments are
 * serialised on that row and a balance can never be spent twice.
 */
export async function lockBalance(
  tx: TxSql,
  personId: string,
  customerId: string,
  currency: string,
): Promise<Units> {
  await tx`insert into balances (person_id, customer_id, currency) values (${personId}, ${customerId}, ${currency})
    on conflict (person_id) do nothing`;
  const [row] = await tx<
    { balance: string }[]
  >`select balance from balances where person_id = ${personId} for update`;
  return money(row.balance);
}

export interface Movement {
  personId: string;
  customerId: string;
  amount: Units;
  kind: string;
  description: string;
  documentId?: string;
}

/** Appends a ledger entry and moves the balance; refuses to go below zero. Call after lockBalance. */
export async function move(tx: TxSql, m: Movement): Promise<Units> {
  const [row] = await tx<{ balance: string }[]>`select balance from balances where person_id = ${m.personId}`;
  const after = money(row.balance) + m.amount;
  if (after < 0n)
    throw apiError("BAD_REQUEST", "Insufficient credit balance", {
      violations: [{ field: "amount", message: "exceeds the credit balance" }],
    });
  await tx`update balances set balance = ${formatMoney(after)} where person_id = ${m.personId}`;
  await tx`insert into ledger (person_id, customer_id, amount, balance_after, kind, description, document_id)
    values (${m.personId}, ${m.customerId}, ${formatMoney(m.amount)}, ${formatMoney(after)}, ${m.kind},
            ${m.description}, ${m.documentId ?? null})`;
  return after;
}

export async function balanceOf(tx: TxSql, personId: string): Promise<Units> {
  const [row] = await tx<{ balance: string }[]>`select balance from balances where person_id = ${personId}`;
  return row ? money(row.balance) : 0n;
}
