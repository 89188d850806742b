import { z } from "zod";
import { idempotencyOf } from "../idempotency.ts";
import { fromJson } from "../json-result.ts";
import { route } from "../route.ts";
import { idParam, pageQuery } from "../schemas.ts";

const payBody = z
  .object({
    amount: z
      .number({ error: "must be a number" })
      .positive({ error: "must be greater than zero" })
      .refine((n) => Number.isFinite(n) && Math.round(n * 10_000) === n * 10_000, {
        error: "at most 4 decimals",
      })
      .optional(),
  })
  .strict();

/** Invoices and proformas share their routes; only the kind differs. */
function documentRoutes(kind: "invoice" | "proforma") {
  const plural = `${kind}s`;
  const title = kind === "invoice" ? "Invoices and proformas" : "Invoices and proformas";
  return [
    route({
      method: "get",
      path: `/${plural}`,
      tag: title,
      summary: `${kind === "invoice" ? "Invoices" : "Proformas"} (default 20; ?status=unpaid narrows; stats added)`,
      auth: { scope: "read", permissions: ["view_invoices"] },
      query: pageQuery(20).extend({ status: z.enum(["unpaid", "paid", "cancelled"]).optional() }),
      handler: async ({ clients, caller, query }) => ({
        data: fromJson(
          (
            await clients.billing.listDocuments({
              caller,
              kind,
              status: query.status ?? "",
              page: query.page,
              limit: query.limit,
            })
          ).result,
        ),
      }),
    }),
    route({
      method: "get",
      path: `/${plural}/:id`,
      tag: title,
      summary: `One ${kind} with line items and the amount already settled`,
      auth: { scope: "read", permissions: ["view_invoices"] },
      params: z.object({ id: idParam }),
      handler: async ({ clients, caller, params }) => ({
        data: fromJson((await clients.billing.getDocument({ caller, kind, documentId: params.id })).result),
      }),
    }),
    route({
      method: "post",
      path: `/${plural}/:id/pay`,
      tag: title,
      summary:
        kind === "invoice"
          ? "Pay from credit: empty body for the full amount, or amount for part"
          : "Pay from credit; a paid proforma converts to an invoice returned in the response",
      auth: { scope: "billing", permissions: ["pay_invoices"] },
      params: z.object({ id: idParam }),
      body: payBody,
      cooldown: { rule: { action: "pay", limit: 10, windowSeconds: 60 }, resource: (ctx) => ctx.params.id },
      handler: async ({ clients, caller, params, body, req }) => {
        const r = await clients.billing.payDocument({
          caller,
          kind,
          documentId: params.id,
          amount: body.amount === undefined ? "" : body.amount.toFixed(4),
          ...idempotencyOf(req),
        });
        return { data: fromJson(r.result), extra: { message: r.message } };
      },
    }),
  ];
}

export const documentRoutesAll = [...documentRoutes("invoice"), ...documentRoutes("proforma")];
