import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { badRequest, PAGE_SIZE, type Sql } from "@hb/platform";
import { accountCurrency, balanceRow, currencyOf, lockBalance } from "./account-currency.ts";
import type { AccountLookup } from "./account-lookup.ts";
import { clock } from "./clock.ts";
import { moneyOut } from "./contract-values.ts";
import { serviceStatus, transactionKind } from "./enums.ts";
import type { BillingHandlers } from "./handlers.ts";
import { move } from "./ledger.ts";
import { listPage } from "./list-query.ts";
import { formatMoney, money, monthlyEquivalent, requestedMoney } from "./money.ts";
import { callerOf, transact } from "./shared.ts";

/** `accounts` answers who belongs to which customer and in which currency it pays (auth owns both). */
export function createAccount(sql: Sql, accounts: AccountLookup): BillingHandlers {
  return {
    async getAccount(req) {
      const caller = callerOf(req.caller);
      const row = await balanceRow(sql, caller.personId);
      return { balance: moneyOut(row?.balance ?? "0", currencyOf(row, "")) };
    },

    async getUsage(req) {
      const caller = callerOf(req.caller);
      const services = await sql<{ status: string; count: number }[]>`
        select status, count(*)::int as count from services where customer_id = ${caller.customerId} group by status`;
      const recurring = await sql<{ amount: string; cycle: string }[]>`
        select amount::text, cycle from services where customer_id = ${caller.customerId} and status in ('active', 'suspended')`;
      const [unpaid] = await sql<{ n: number; due: string }[]>`
        select count(*)::int as n, coalesce(sum(total - amount_paid), 0)::text as due from documents
        where customer_id = ${caller.customerId} and kind = 'invoice' and status = 'unpaid'`;
      const [paid] = await sql<{ paid: string }[]>`
        select coalesce(sum(-amount), 0)::text as paid from ledger
        where customer_id = ${caller.customerId} and kind = 'payment' and created_at >= date_trunc('month', ${clock.now()}::timestamptz)`;
      const [hourly] = await sql<{ charged: string }[]>`
        select coalesce(sum(-amount), 0)::text as charged from ledger
        where customer_id = ${caller.customerId} and kind = 'hourly_charge' and created_at >= date_trunc('month', ${clock.now()}::timestamptz)`;
      const row = await balanceRow(sql, caller.personId);
      const monthly = recurring.reduce((sum, r) => sum + monthlyEquivalent(money(r.amount), r.cycle), 0n);
      // Every figure is in the account's currency: the balance's once it holds credit.
      const currency = currencyOf(row, caller.currency);
      return {
        usage: {
          servicesTotal: services.reduce((n, s) => n + s.count, 0),
          servicesByStatus: services.map((s) => ({ status: serviceStatus.out(s.status), count: s.count })),
          recurringMonthlyAmount: moneyOut(monthly, currency),
          unpaidInvoicesCount: unpaid.n,
          unpaidInvoicesTotal: moneyOut(money(unpaid.due), currency),
          paidThisMonth: moneyOut(money(paid.paid), currency),
          hourlyChargesThisMonth: moneyOut(money(hourly.charged), currency),
          balance: row ? moneyOut(money(row.balance), row.currency) : undefined,
        },
      };
    },

    async listTransactions(req) {
      const caller = callerOf(req.caller);
      const [{ rows, total }, balance] = await Promise.all([
        listPage<{
          id: string;
          amount: string;
          balance_after: string;
          kind: string;
          description: string;
          document_id: string | null;
          created_at: Date;
        }>(sql, req, PAGE_SIZE.default, {
          select: sql`select id::text, amount::text, balance_after::text, kind, description, document_id, created_at`,
          from: sql`from ledger where person_id = ${caller.personId}`,
          orderBy: sql`ledger.id desc`,
        }),
        balanceRow(sql, caller.personId),
      ]);
      const currency = currencyOf(balance, caller.currency);
      return {
        transactions: rows.map((r) => ({
          id: BigInt(r.id),
          kind: transactionKind.out(r.kind),
          amount: moneyOut(money(r.amount), currency),
          balanceAfter: moneyOut(money(r.balance_after), currency),
          description: r.description,
          documentId: r.document_id ?? undefined,
          createdAt: timestampFromDate(r.created_at),
        })),
        total,
      };
    },

    async adminAdjustCredit(req) {
      const amount = requestedMoney(req.amount, "amount");
      if (amount === 0n) throw badRequest("amount", "amount must be a non-zero decimal, e.g. 100 or -5.50");
      // Only a person of the customer named is credited, and only in that customer's currency.
      const account = await accounts(req.customerId, req.personId);
      if (!account.personBelongs) {
        throw badRequest(
          "person_id",
          `person_id must name a person of customer ${req.customerId}; ${req.personId} is not one`,
        );
      }
      const currency = await accountCurrency(sql, { personId: req.personId, currency: account.currency });
      if (req.currency && req.currency !== currency) {
        throw badRequest("currency", `currency must be the account's own, ${currency}, not ${req.currency}`);
      }
      const balance = await transact(sql, async (tx) => {
        await lockBalance(tx, req.personId, req.customerId, currency);
        return move(tx, {
          personId: req.personId,
          customerId: req.customerId,
          amount,
          kind: amount > 0n ? "credit_added" : "credit_removed",
          description: req.description || (amount > 0n ? "Credit added by staff" : "Credit removed by staff"),
        });
      });
      return { balance: formatMoney(balance) };
    },
  };
}
