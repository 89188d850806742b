import type { TxSql } from "@hb/platform";
import { lockBalance } from "../account-currency.ts";
import { move } from "../ledger.ts";
import { min, type Units } from "../money.ts";

/**
 * Takes back from the payer's balance up to `due` of a card payment's credit the provider took
 * back (a refund, a dispute's withdrawn funds); answers what was taken. The balance never goes
 * below zero: credit already spent stays spent, and `due` less the answer is the shortfall staff see.
 */
export async function takeBack(
  tx: TxSql,
  payer: { person_id: string; customer_id: string; currency: string },
  due: Units,
  description: string,
): Promise<Units> {
  const balance = await lockBalance(tx, payer.person_id, payer.customer_id, payer.currency);
  const take = min(due, balance);
  if (take > 0n) {
    await move(tx, {
      personId: payer.person_id,
      customerId: payer.customer_id,
      amount: -take,
      kind: "credit_removed",
      description,
    });
  }
  return take;
}
