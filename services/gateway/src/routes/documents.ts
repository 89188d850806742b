import type { PayDocumentResponse } from "@hb/contracts/hb/billing/v1/billing_pb";
import { type Document, DocumentKind } from "@hb/contracts/hb/billing/v1/documents_pb";
import { PAGE_SIZE } from "@hb/platform/paging";
import { z } from "zod";
import { cooldowns } from "../cooldowns.ts";
import { idempotencyOf } from "../idempotency.ts";
import { required } from "../mappers/contract.ts";
import { documentStatsJson } from "../mappers/document.ts";
import { documentStatusWords } from "../mappers/enums.ts";
import { invoiceDetailJson, invoiceJson, invoicePaymentJson } from "../mappers/invoice.ts";
import { proformaDetailJson, proformaJson, proformaPaymentJson } from "../mappers/proforma.ts";
import { route } from "../route.ts";
import { exactNumbers, idParam, moneyAmount, pageQuery, pagination } from "../schemas.ts";
import * as wire from "../wire/invoice.ts";
import { DOCUMENT_STATUS_WORDS, without } from "../wire/words.ts";

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

/** Each kind's contract value and its mappers. */
const kinds = {
  invoice: {
    value: DocumentKind.INVOICE,
    record: invoiceJson,
    detail: invoiceDetailJson,
    payment: invoicePaymentJson,
    paid: "Invoice paid from credit",
  },
  proforma: {
    value: DocumentKind.PROFORMA,
    record: proformaJson,
    detail: proformaDetailJson,
    payment: proformaPaymentJson,
    paid: "Proforma paid from credit",
  },
} satisfies Record<
  "invoice" | "proforma",
  {
    value: DocumentKind;
    record: (d: Document) => unknown;
    detail: (d: Document) => unknown;
    payment: (r: PayDocumentResponse) => unknown;
    paid: string;
  }
>;

/** Invoices and proformas share their routes; only the kind differs. */
function documentRoutes(kind: "invoice" | "proforma") {
  const plural = `${kind}s`;
  const title = "Invoices and proformas";
  const shape = shapes[kind];
  const k = kinds[kind];
  return [
    route({
      method: "get",
      path: `/${plural}`,
      tag: title,
      summary: `${kind === "invoice" ? "Invoices" : "Proformas"} (default 20; ?status=unpaid narrows; stats added)`,
      auth: { scope: "read", permissions: ["view_invoices"] },
      query: pageQuery(PAGE_SIZE.default).extend({
        status: z.enum(without(DOCUMENT_STATUS_WORDS, "converted")).optional(),
      }),
      response: shape.list[0],
      example: shape.list[1],
      handler: async ({ clients, caller, query }) => {
        const list = await clients.billing.listDocuments({
          caller,
          kind: k.value,
          status: query.status ? documentStatusWords.value(query.status) : undefined,
          page: query.page,
          limit: query.limit,
        });
        return {
          data: {
            [plural]: list.documents.map((d) => k.record(d)),
            pagination: pagination(query.page, query.limit, list.total),
            stats: documentStatsJson(list.byStatus),
          },
        };
      },
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
      handler: async ({ clients, caller, params }) => {
        const { document } = await clients.billing.getDocument({
          caller,
          kind: k.value,
          documentId: params.id,
        });
        return { data: k.detail(required(document, kind)) };
      },
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
      cooldown: cooldowns.pay,
      handler: async ({ clients, caller, params, body, req }) => {
        const r = await clients.billing.payDocument({
          caller,
          kind: k.value,
          documentId: params.id,
          // In the account's currency, which is the currency of every document it is sent.
          amount: body.amount === undefined ? undefined : { currency: caller.currency, amount: body.amount },
          ...idempotencyOf(req),
        });
        return {
          data: k.payment(r),
          extra: { message: r.fullyPaid ? k.paid : "Partial payment applied from credit" },
        };
      },
    }),
  ];
}

export const documentRoutesAll = [...documentRoutes("invoice"), ...documentRoutes("proforma")];
