/**
 * The support desk's customer view and its manual credit adjustment (BillingDeskService, the admin
 * panel's). Reads are one page of each list in one call; the adjustment is an ordinary ledger
 * movement that names the staff member who made it, made once per idempotency key
 * (staff-writes.ts).
 */
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { badRequest, PAGE_SIZE, pageWindow, type Sql } from "@hb/platform";
import { accountCurrency, customerBalances, lockBalance } from "./account-currency.ts";
import type { AccountLookup } from "./account-lookup.ts";
import { moneyOut } from "./contract-values.ts";
import { transactionKind } from "./enums.ts";
import type { BillingHandlers } from "./handlers.ts";
import { moveEntry } from "./ledger.ts";
import { formatMoney, money, parseMoney, type Units } from "./money.ts";
import { DOCUMENT_NAMES, type DocumentRow, type ServiceRow, summaryOut } from "./records.ts";
import { documentOut } from "./records-out.ts";
import { keyedStaffWrite, sameWrite, settleStaffWrite, staffActor, staffMayWrite } from "./staff-writes.ts";

interface LedgerRow {
  id: string;
  person_id: string;
  staff_id: string | null;
  amount: string;
  balance_after: string;
  kind: string;
  description: string;
  document_id: string | null;
  currency: string;
  created_at: Date;
}

export function createDesk(sql: Sql, accounts: AccountLookup): BillingHandlers {
  return {
    async deskGetCustomerBilling(req) {
      const id = req.customerId;
      const at = (n: number) => pageWindow(n, PAGE_SIZE.default);
      const [s, inv, pro, t] = [
        req.servicesPage,
        req.invoicesPage,
        req.proformasPage,
        req.transactionsPage,
      ].map(at);
      const docs = (kind: string, p: ReturnType<typeof at>) =>
        sql<DocumentRow[]>`
          select documents.*, ${sql.unsafe(DOCUMENT_NAMES)} from documents where customer_id = ${id} and kind = ${kind}
          order by created_at desc, id desc limit ${p.limit} offset ${p.offset}`;
      // Independent reads, sent together: one round trip of latency for the whole page.
      const [services, invoices, proformas, balances, ledger, counts] = await Promise.all([
        sql<ServiceRow[]>`
          select s.*, p.name as product_name
          from services s join products p on p.id = s.product_id where s.customer_id = ${id}
          order by s.created_at desc, s.id desc limit ${s.limit} offset ${s.offset}`,
        docs("invoice", inv),
        docs("proforma", pro),
        customerBalances(sql, id),
        sql<LedgerRow[]>`
          select id::text, person_id, staff_id, amount::text, balance_after::text, kind, description, document_id,
                 currency, created_at
          from ledger where customer_id = ${id} order by id desc limit ${t.limit} offset ${t.offset}`,
        sql<{ services: number; invoices: number; proformas: number; ledger: number }[]>`
          select (select count(*) from services where customer_id = ${id})::int as services,
                 (select count(*) from documents where customer_id = ${id} and kind = 'invoice')::int as invoices,
                 (select count(*) from documents where customer_id = ${id} and kind = 'proforma')::int as proformas,
                 (select count(*) from ledger where customer_id = ${id})::int as ledger`,
      ]);
      const [n] = counts;
      return {
        services: services.map(summaryOut),
        servicesTotal: n.services,
        invoices: invoices.map((d) => documentOut(d)),
        invoicesTotal: n.invoices,
        proformas: proformas.map((d) => documentOut(d)),
        proformasTotal: n.proformas,
        balances: balances.map((b) => ({ personId: b.person_id, balance: moneyOut(b.balance, b.currency) })),
        transactions: ledger.map((r) => ({
          personId: r.person_id,
          staffId: r.staff_id ?? "",
          transaction: {
            id: BigInt(r.id),
            kind: transactionKind.out(r.kind),
            amount: moneyOut(money(r.amount), r.currency),
            balanceAfter: moneyOut(money(r.balance_after), r.currency),
            description: r.description,
            documentId: r.document_id ?? undefined,
            createdAt: timestampFromDate(r.created_at),
          },
        })),
        transactionsTotal: n.ledger,
      };
    },

    async deskAdjustCredit(req, ctx) {
      const amount = parseMoney(req.amount);
      if (amount === undefined || amount === 0n)
        throw badRequest("amount", "must be a non-zero amount with at most 4 decimals, e.g. 25 or -5.50");
      const actor = staffActor(ctx, req.staffId);
      const account = await accounts(req.customerId, req.personId, actor.staffId ?? undefined);
      if (actor.staffId !== null) staffMayWrite(account.staffPermissions, ["edit_clients"]);
      if (!account.personBelongs) throw badRequest("person_id", "must name a person of this customer");
      const currency = await accountCurrency(sql, { personId: req.personId, currency: account.currency });
      const reason = req.reason.trim();
      const answer = (balance: Units, id: string) => ({
        balance: moneyOut(formatMoney(balance), currency),
        transactionId: BigInt(id),
      });
      return keyedStaffWrite(
        sql,
        ctx,
        req.idempotencyKey,
        async (tx) => {
          await lockBalance(tx, req.personId, req.customerId, currency);
          // A debit past the balance is refused by move (BAD_REQUEST on amount): staff take back
          // credit, they never put an account in debt.
          const entry = await moveEntry(tx, {
            personId: req.personId,
            customerId: req.customerId,
            amount,
            kind: amount > 0n ? "credit_added" : "credit_removed",
            description: reason,
            staffId: actor.staffId ?? undefined,
            operator: actor.operator,
          });
          return { ledgerId: entry.id, result: answer(entry.balance, entry.id) };
        },
        async (_tx, first) => {
          sameWrite(first, req.personId, amount);
          return answer(first.balanceAfter, first.ledgerId);
        },
      );
    },

    async deskSettleWrite(req, ctx) {
      const s = await settleStaffWrite(sql, ctx, req.idempotencyKey);
      if (!s.committed) return { committed: false };
      return {
        committed: true,
        transactionId: BigInt(s.ledgerId),
        balanceAfter: moneyOut(formatMoney(s.balanceAfter), s.currency),
        customerId: s.customerId,
      };
    },
  };
}
