import type { ServiceImpl } from "@connectrpc/connect";
import type { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { badRequest, notFound, type Sql } from "@hb/platform";
import { createDocument, payFromCredit } from "./documents.ts";
import { remember, replay } from "./idempotency.ts";
import { money, parseMoney, toNumber } from "./money.ts";
import { type DocumentRow, documentJson, type LineRow, selectServices } from "./records.ts";
import { callerOf, json, page, pagination, requireUuid, transact } from "./shared.ts";

const kindOf = (k: string): "invoice" | "proforma" => {
  if (k !== "invoice" && k !== "proforma") throw badRequest("kind", "kind must be invoice or proforma");
  return k;
};

export function createDocumentHandlers(sql: Sql, ns: string): Partial<ServiceImpl<typeof BillingService>> {
  return {
    async listDocuments(req) {
      const caller = callerOf(req.caller);
      const kind = kindOf(req.kind);
      const p = page(req.page, req.limit, 20);
      const status = req.status || null;
      const rows = await sql<DocumentRow[]>`
        select * from documents where customer_id = ${caller.customerId} and kind = ${kind}
          and (${status}::text is null or status = ${status})
        order by created_at desc, id desc limit ${p.limit} offset ${p.offset}`;
      const stats = await sql<{ status: string; n: number; total: string; due: string }[]>`
        select status, count(*)::int as n, sum(total)::text as total, sum(total - amount_paid)::text as due
        from documents where customer_id = ${caller.customerId} and kind = ${kind} group by status`;
      const total = stats.filter((s) => status === null || s.status === status).reduce((n, s) => n + s.n, 0);
      return json({
        [`${kind}s`]: rows.map((d) => documentJson(d)),
        pagination: pagination(p, total),
        stats: {
          count: stats.reduce((n, s) => n + s.n, 0),
          by_status: Object.fromEntries(
            stats.map((s) => [
              s.status,
              { count: s.n, total: toNumber(money(s.total)), amount_due: toNumber(money(s.due)) },
            ]),
          ),
        },
      });
    },

    async getDocument(req) {
      const caller = callerOf(req.caller);
      const kind = kindOf(req.kind);
      const [d] = await sql<DocumentRow[]>`
        select * from documents where id = ${requireUuid("id", req.documentId)} and customer_id = ${caller.customerId} and kind = ${kind}`;
      if (!d) throw notFound(kind === "invoice" ? "Invoice" : "Proforma");
      const lines = await sql<
        LineRow[]
      >`select * from document_lines where document_id = ${d.id} order by id`;
      return json(documentJson(d, lines));
    },

    async payDocument(req) {
      const caller = callerOf(req.caller);
      const kind = kindOf(req.kind);
      requireUuid("id", req.documentId);
      let requested: bigint | undefined;
      if (req.amount !== "") {
        requested = parseMoney(req.amount);
        if (requested === undefined)
          throw badRequest("amount", "amount must be a number with at most 4 decimals");
      }
      const op = `pay:${req.documentId}`;
      const out = await transact(sql, async (tx) => {
        const again = await replay(tx, caller.personId, op, req.idempotencyKey, req.requestHash);
        if (again) return again;
        const [d] = await tx<DocumentRow[]>`
          select id from documents where id = ${req.documentId} and customer_id = ${caller.customerId} and kind = ${kind}`;
        if (!d) throw notFound(kind === "invoice" ? "Invoice" : "Proforma");
        const r = await payFromCredit(tx, ns, d.id, caller, requested);
        const result = JSON.stringify({
          message: r.fullyPaid
            ? `${kind === "invoice" ? "Invoice" : "Proforma"} paid from credit`
            : "Partial payment applied from credit",
          data: {
            creditApplied: toNumber(r.creditApplied),
            newBalance: toNumber(r.newBalance),
            remainingAmount: toNumber(r.remaining),
            ...(kind === "proforma" ? { proformaPaid: r.fullyPaid } : {}),
            invoice: r.invoice
              ? { id: r.invoice.id, invoice_number: r.invoice.number, status: r.invoice.status }
              : null,
          },
        });
        await remember(tx, caller.personId, op, req.idempotencyKey, req.requestHash, result);
        return result;
      });
      const parsed = JSON.parse(out) as { message: string; data: unknown };
      return { message: parsed.message, result: { json: JSON.stringify(parsed.data) } };
    },

    async adminCreateInvoice(req) {
      const [s] = await selectServices(sql, "s.id = $1", [requireUuid("service_id", req.serviceId)]);
      if (!s) throw notFound("Service");
      const amount = req.amount ? parseMoney(req.amount) : money(s.amount);
      if (amount === undefined || amount <= 0n)
        throw badRequest("amount", "amount must be a positive decimal");
      const d = await transact(sql, (tx) =>
        createDocument(tx, {
          kind: req.kind === "proforma" ? "proforma" : "invoice",
          customerId: s.customer_id,
          personId: s.person_id,
          currency: s.currency,
          purpose: "manual",
          serviceId: s.id,
          lines: [{ description: req.description || `${s.name} charge`, amount, serviceId: s.id }],
        }),
      );
      return { document: { json: JSON.stringify(documentJson(d)) } };
    },
  };
}
