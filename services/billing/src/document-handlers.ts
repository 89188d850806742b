import { create, toJsonString } from "@bufbuild/protobuf";
import { PayDocumentResponseSchema } from "@hb/contracts/hb/billing/v1/billing_pb";
import { DocumentKind } from "@hb/contracts/hb/billing/v1/documents_pb";
import type { Money } from "@hb/contracts/hb/platform/v1/money_pb";
import { apiError, badRequest, notFound, PAGE_SIZE, type Sql } from "@hb/platform";
import { currencyMismatch, lockedBalance } from "./account-currency.ts";
import { moneyOut } from "./contract-values.ts";
import { payGroup, payInOneStatement, storedAnswer } from "./document-pay.ts";
import { createDocument, lockedDocument, payFromCredit } from "./documents.ts";
import { documentKind, documentStatus } from "./enums.ts";
import type { BillingHandlers } from "./handlers.ts";
import { remember, replay } from "./idempotency.ts";
import { listPage } from "./list-query.ts";
import { money, requestedMoney, type Units } from "./money.ts";
import { DOCUMENT_NAMES, type DocumentRow, type LineRow, selectServices } from "./records.ts";
import { documentOut } from "./records-out.ts";
import { callerOf, transact, transactPipelined } from "./shared.ts";

/** The stored kind of a request's document kind, which the contract requires. */
const kindOf = (k: DocumentKind) => documentKind.defined(k);

/** A requested amount: exact, at most 4 decimals, in the currency it is paid in (empty: that one). */
function amountIn(m: Money, field: string, currency: string): Units {
  const units = requestedMoney(m.amount, field);
  if (m.currency && m.currency !== currency) throw currencyMismatch(currency, m.currency, field);
  return units;
}

export function createDocumentHandlers(sql: Sql, ns: string): BillingHandlers {
  const pays = payGroup(sql);
  return {
    async listDocuments(req) {
      const caller = callerOf(req.caller);
      const kind = kindOf(req.kind);
      const status = documentStatus.in(req.status) ?? null;
      const stats = sql<{ status: string; n: number; total: string; due: string; currency: string }[]>`
        select status, count(*)::int as n, sum(total)::text as total, sum(case when status = 'unpaid' then total - amount_paid else 0 end)::text as due,
               min(currency) as currency
        from documents where customer_id = ${caller.customerId} and kind = ${kind} group by status`.execute();
      // The totals by status hold the list's count: the page's own count would be a third statement.
      const listed = stats.then((all) =>
        all.filter((s) => status === null || s.status === status).reduce((n, s) => n + s.n, 0),
      );
      const [{ rows, total }, byStatus] = await Promise.all([
        listPage<DocumentRow>(
          sql,
          req,
          PAGE_SIZE.default,
          {
            select: sql`select documents.*, ${sql.unsafe(DOCUMENT_NAMES)}`,
            from: sql`from documents where customer_id = ${caller.customerId} and kind = ${kind}
              ${status ? sql`and status = ${status}` : sql``}`,
            orderBy: sql`created_at desc, id desc`,
          },
          listed,
        ),
        stats,
      ]);
      return {
        documents: rows.map((d) => documentOut(d)),
        total,
        byStatus: byStatus.map((s) => ({
          status: documentStatus.out(s.status),
          count: s.n,
          total: moneyOut(money(s.total), s.currency),
          amountDue: moneyOut(money(s.due), s.currency),
        })),
      };
    },

    async getDocument(req) {
      const caller = callerOf(req.caller);
      const kind = kindOf(req.kind);
      const [d] = await sql<DocumentRow[]>`
        select documents.*, ${sql.unsafe(DOCUMENT_NAMES)}
        from documents where id = ${req.documentId} and customer_id = ${caller.customerId} and kind = ${kind}`;
      if (!d) throw notFound(kind === "invoice" ? "Invoice" : "Proforma");
      const lines = await sql<
        LineRow[]
      >`select * from document_lines where document_id = ${d.id} order by id`;
      return { document: documentOut(d, lines) };
    },

    async payDocument(req) {
      const caller = callerOf(req.caller);
      const kind = kindOf(req.kind);
      const part = req.amount
        ? { units: requestedMoney(req.amount.amount, "amount"), currency: req.amount.currency }
        : undefined;
      const op = `pay:${req.documentId}`;
      // An invoice whose payment sets nothing in motion is paid in one statement (document-pay.ts);
      // any other document by the engine below.
      const paid = await payInOneStatement(pays, {
        personId: caller.personId,
        customerId: caller.customerId,
        documentId: req.documentId,
        kind,
        amount: part,
        operation: op,
        idempotencyKey: req.idempotencyKey,
        requestHash: req.requestHash,
      });
      if (paid) return paid;
      return transactPipelined(sql, async (tx, withCommit) => {
        // One round trip, with the begin: the idempotency record, then the payer's balance and the document, both
        // locked, in the order every payment locks them.
        const [again, balance, d] = await Promise.all([
          replay(tx, caller.personId, op, req.idempotencyKey, req.requestHash),
          lockedBalance(tx, caller.personId),
          lockedDocument(tx, req.documentId, { customerId: caller.customerId, kind }),
        ]);
        if (again) return storedAnswer(JSON.parse(again));
        if (!d) throw notFound(kind === "invoice" ? "Invoice" : "Proforma");
        const requested = req.amount ? amountIn(req.amount, "amount", d.currency) : undefined;
        const r = await payFromCredit(tx, ns, d.id, caller, requested, { balance, document: d });
        const result = create(PayDocumentResponseSchema, {
          creditApplied: moneyOut(r.creditApplied, d.currency),
          newBalance: moneyOut(r.newBalance, d.currency),
          remainingAmount: moneyOut(r.remaining, d.currency),
          fullyPaid: r.fullyPaid,
          invoice: r.invoice ? documentOut(r.invoice) : undefined,
        });
        const stored = toJsonString(PayDocumentResponseSchema, result);
        withCommit(remember(tx, caller.personId, op, req.idempotencyKey, req.requestHash, stored));
        return result;
      });
    },

    async adminCreateInvoice(req) {
      const [s] = await selectServices(sql, "s.id = $1", [req.serviceId]);
      if (!s) throw notFound("Service");
      if (s.status === "terminated")
        throw apiError("CONFLICT", "The service is terminated; an invoice cannot be raised on it");
      const amount = req.amount ? amountIn(req.amount, "amount", s.currency) : money(s.amount);
      if (amount <= 0n) throw badRequest("amount", "amount must be a positive decimal");
      const d = await transact(sql, (tx) =>
        createDocument(tx, {
          kind: req.kind === DocumentKind.PROFORMA ? "proforma" : "invoice",
          customerId: s.customer_id,
          personId: s.person_id,
          currency: s.currency,
          purpose: "manual",
          serviceId: s.id,
          lines: [{ description: req.description || `${s.name} charge`, amount, serviceId: s.id }],
        }),
      );
      return { document: documentOut(d) };
    },
  };
}
