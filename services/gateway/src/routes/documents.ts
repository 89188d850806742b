import { z } from "zod";
import { idempotencyOf } from "../idempotency.ts";
import { fromJson } from "../json-result.ts";
import { route } from "../route.ts";
import { exactNumbers, idParam, moneyAmount, pageQuery } from "../schemas.ts";
import * as wire from "../wire/invoice.ts";

const payBody = exactNumbers(["amount"], z.object({ amount: moneyAmount.optional() }).strict());

/** What each kind's routes answer: the same shapes, the number field and the payment named for the kind. */
const shapes = {
  invoice: {
    list: [wire.invoiceList, wire.invoiceListExample],
    detail: [wire.invoiceDetail, wire.invoiceDetailExample],
    payment: [wire.invoicePayment, wire.invoicePaymentExample],
  },
  proforma: {
    list: [wire.proformaList, wire.proformaListExample],
    detail: [wire.proformaDetail, wire.proformaDetailExample],
    payment: [wire.proformaPayment, wire.proformaPaymentExample],
  },
} as const;

/** Invoices and proformas share their routes; only the kind differs. */
function documentRoutes(kind: "invoice" | "proforma") {
  const plural = `${kind}s`;
  const title = "Invoices and proformas";
  const shape = shapes[kind];
  return [
    route({
      method: "get",
      path: `/${plural}`,
      tag: title,
      summary: `${kind === "invoice" ? "Invoices" : "Proformas"} (default 20; ?status=unpaid narrows; stats added)`,
      auth: { scope: "read", permissions: ["view_invoices"] },
      query: pageQuery(20).extend({ status: z.enum(["unpaid", "paid", "cancelled"]).optional() }),
      response: shape.list[0],
      example: shape.list[1],
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
      response: shape.detail[0],
      example: shape.detail[1],
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
      errors: ["CONFLICT"],
      params: z.object({ id: idParam }),
      description:
        'amount: up to 4 decimals, as a JSON number (read exactly as written, never through a float) or a decimal string such as "0.07"; exponent forms (1e-2) are refused. An empty body or {} pays the full amount.',
      body: payBody,
      idempotent: true,
      response: shape.payment[0],
      responseExtra: { message: z.string() },
      exampleExtra: { message: "Invoice paid from credit" },
      example: shape.payment[1],
      cooldown: { rule: { action: "pay", limit: 10, windowSeconds: 60 }, resource: (ctx) => ctx.params.id },
      handler: async ({ clients, caller, params, body, req }) => {
        const r = await clients.billing.payDocument({
          caller,
          kind,
          documentId: params.id,
          amount: body.amount ?? "",
          ...idempotencyOf(req),
        });
        return { data: fromJson(r.result), extra: { message: r.message } };
      },
    }),
  ];
}

export const documentRoutesAll = [...documentRoutes("invoice"), ...documentRoutes("proforma")];
