import type { GetPersonResponse } from "@hb/contracts/hb/auth/v1/auth_pb";
import type { GetAccountResponse } from "@hb/contracts/hb/billing/v1/billing_pb";
import type { z } from "zod";
import type { account, accountBalance } from "../wire/account.ts";
import { amountNumber } from "./contract.ts";
import { customerStatusWire } from "./customer-status.ts";

/** GET /account: auth's person and customer with billing's credit. */
export function accountJson(
  { person, customer }: GetPersonResponse,
  credit: GetAccountResponse,
  permissions: string[],
): z.infer<typeof account> {
  type Account = z.infer<typeof account>;
  return {
    id: customer!.id,
    name: person!.name,
    email: person!.email,
    company: customer!.company,
    country: customer!.country,
    currency: customer!.currency,
    status: customerStatusWire(customer!.status),
    credit_balance: amountNumber(credit.balance),
    person: { id: person!.id, name: person!.name, email: person!.email, is_owner: person!.isOwner },
    permissions: permissions as Account["permissions"],
  };
}

/** GET /account/balance: before any credit is held the account's own currency is shown. */
export function accountBalanceJson(
  credit: GetAccountResponse,
  accountCurrency: string,
): z.infer<typeof accountBalance> {
  return { balance: amountNumber(credit.balance), currency: credit.balance?.currency || accountCurrency };
}
