/**
 * Staff confirm that a bank transfer's money arrived (TopUpStaffService.ConfirmBankTransfer). The
 * amount is what the bank statement shows, so it is bounded as a top-up is: positive, within the
 * top-up maximum, no more decimals than the currency has; and more than the customer asked for
 * only with an explicit override (the admin panel asks for the stronger approve_overpayments
 * permission before sending it). The credit is made once per transfer (top_up_credits) and once
 * per idempotency key (staff-writes.ts), by the staff member the caller's identity vouches for.
 */

import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  ConfirmBankTransferRequest,
  ConfirmBankTransferResponseSchema,
} from "@hb/contracts/hb/billing/v1/payments_pb";
import { badRequest, notFound, type Sql, type TxSql } from "@hb/platform";
import { currencyDecimals } from "@hb/platform/currency-decimals";
import { displayMoney } from "@hb/platform/money";
import type { AccountLookup } from "../account-lookup.ts";
import { formatMoney, money, parseMoney, type Units } from "../money.ts";
import { keyedStaffWrite, sameWrite, staffActor, staffMayWrite } from "../staff-writes.ts";
import { normaliseReference } from "./reference.ts";
import type { TopUpRow } from "./top-up-row.ts";
import { alreadyConfirmed, creditOnce, topUpOut } from "./top-ups.ts";

type Answer = MessageInitShape<typeof ConfirmBankTransferResponseSchema>;

const withinDecimals = (amount: Units, decimals: number) =>
  amount % 10n ** BigInt(4 - Math.min(4, decimals)) === 0n;

const refuse = (message: string) => badRequest("received_amount", message);

export async function confirmBankTransfer(
  sql: Sql,
  d: { limits: { max: Units }; accounts: AccountLookup },
  req: ConfirmBankTransferRequest,
  ctx: HandlerContext | undefined,
): Promise<Answer> {
  const reference = normaliseReference(req.reference);
  if (!reference) throw badRequest("reference", "reference must look like HB-XXXX-XXXX");
  const actor = staffActor(ctx, req.staffId);
  const received = parseMoney(req.receivedAmount);
  if (received === undefined || received <= 0n) {
    throw refuse("received_amount must be a positive decimal, e.g. 100 or 99.50");
  }
  const [t] = await sql<Pick<TopUpRow, "id" | "customer_id" | "currency" | "requested">[]>`
    select id, customer_id, currency, requested::text from top_ups
    where reference = ${reference} and method = 'bank_transfer'`;
  if (!t) throw notFound("Bank transfer");
  if (actor.staffId !== null) {
    const { staffPermissions } = await d.accounts(t.customer_id, "", actor.staffId);
    staffMayWrite(
      staffPermissions,
      req.aboveRequested ? ["edit_clients", "approve_overpayments"] : ["edit_clients"],
    );
  }
  const decimals = currencyDecimals(t.currency);
  if (!withinDecimals(received, decimals))
    throw refuse(
      `${t.currency} amounts have ${decimals === 0 ? "no decimals" : `at most ${decimals} decimals`}`,
    );
  if (received > d.limits.max)
    throw refuse(`received_amount is above the top-up maximum of ${displayMoney(d.limits.max, t.currency)}`);
  if (received > money(t.requested) && !req.aboveRequested)
    throw refuse(
      `${displayMoney(received, t.currency)} is more than the ${displayMoney(money(t.requested), t.currency)} asked for; confirm it as an overpayment to credit it`,
    );
  const rowNow = async (tx: TxSql) => {
    const [row] = await tx<TopUpRow[]>`select * from top_ups where id = ${t.id}`;
    return row;
  };
  return keyedStaffWrite<Answer>(
    sql,
    ctx,
    req.idempotencyKey || undefined,
    async (tx) => {
      const r = await creditOnce(tx, t.id, {
        source: `staff:${actor.staffId ?? actor.operator}`,
        amount: received,
        description: `Bank transfer ${reference}`,
        staffId: actor.staffId ?? undefined,
        operator: actor.operator,
      });
      if (!r) throw notFound("Bank transfer");
      if (!r.credited || !r.row.ledger_id) throw alreadyConfirmed(r.row);
      return {
        ledgerId: r.row.ledger_id,
        result: { topUp: topUpOut(r.row), balance: formatMoney(r.balance) },
      };
    },
    async (tx, first) => {
      const row = await rowNow(tx);
      sameWrite(first, row.person_id, received - money(row.refunded));
      return { topUp: topUpOut(row), balance: formatMoney(first.balanceAfter) };
    },
  );
}
