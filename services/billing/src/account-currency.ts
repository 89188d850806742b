/**
 * The account's currency, and this its one reading: the currency of the person's balance once it
 * holds money, else the account's own (auth's, as the caller's certificate or the account lookup
 * says). The balance row fixes it: it is opened in one currency and holds only that one, so every
 * movement of money locks it here (lockBalance) and money in another currency is refused.
 * scripts/lint-homes.ts refuses a read of `balances.currency` anywhere else.
 */
import { apiError, type Sql, type TxSql } from "@hb/platform";
import { money, type Units } from "./money.ts";

export interface BalanceRow {
  balance: string;
  currency: string;
}

/**
 * Locks the person's balance row for the rest of the transaction (creating it at zero when
 * missing). Every movement of a person's money goes through here, so concurrent payments are
 * serialised on that row and a balance can never be spent twice. A balance holds one currency:
 * money in any other currency is refused here, whatever path it came by.
 */
export async function lockBalance(
  tx: TxSql,
  personId: string,
  customerId: string,
  currency: string,
  /** The row lockedBalance returned, when the caller has already read it in this transaction. */
  locked?: BalanceRow,
): Promise<Units> {
  const row =
    locked ?? (await lockedBalance(tx, personId)) ?? (await openBalance(tx, personId, customerId, currency));
  if (row.currency !== currency) throw currencyMismatch(currency, row.currency);
  return money(row.balance);
}

/**
 * The person's balance row, locked for the rest of the transaction; undefined when the person has
 * none yet. One round trip: the row exists for everyone who ever held money.
 */
export async function lockedBalance(tx: TxSql, personId: string): Promise<BalanceRow | undefined> {
  const [row] = await tx<
    BalanceRow[]
  >`select balance, currency from balances where person_id = ${personId} for update`.execute();
  return row;
}

/** Creates the person's balance at zero (a concurrent creator may win) and locks it. */
async function openBalance(tx: TxSql, personId: string, customerId: string, currency: string) {
  await tx`insert into balances (person_id, customer_id, currency) values (${personId}, ${customerId}, ${currency})
    on conflict (person_id) do nothing`;
  const row = await lockedBalance(tx, personId);
  if (!row) throw new Error("balance row vanished inside its transaction");
  return row;
}

export const currencyMismatch = (asked: string, account: string, field = "currency") =>
  apiError("BAD_REQUEST", `This is priced in ${asked}; your account pays in ${account}`, {
    violations: [{ field, message: `not available in ${account} (priced in ${asked})` }],
  });

/** The person's balance row, unlocked (what a read shows); undefined before they held money. */
export async function balanceRow(db: Sql | TxSql, personId: string): Promise<BalanceRow | undefined> {
  const [row] = await db<BalanceRow[]>`select balance, currency from balances where person_id = ${personId}`;
  return row;
}

/** The account's currency from its balance row (when it has one) and the account's own. */
export const currencyOf = (balance: { currency: string } | undefined, own: string): string =>
  balance?.currency ?? own;

/** The account's currency; BAD_REQUEST when neither the balance nor the account has one. */
export async function accountCurrency(
  db: Sql | TxSql,
  account: { personId: string; currency: string },
): Promise<string> {
  const currency = currencyOf(await balanceRow(db, account.personId), account.currency);
  if (!currency) throw apiError("BAD_REQUEST", "The account has no currency");
  return currency;
}

/** Every balance of a customer's people, each in its own currency (the staff desk's view). */
export const customerBalances = (db: Sql | TxSql, customerId: string) =>
  db<{ person_id: string; balance: string; currency: string }[]>`
    select person_id, balance::text, currency from balances where customer_id = ${customerId} order by person_id`;
