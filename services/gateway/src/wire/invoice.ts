import { z } from "zod";
import { currency, decimal4 } from "./money.ts";
import { pagination, paginationExample } from "./pagination.ts";
import { DOCUMENT_KIND_WORDS, DOCUMENT_PURPOSE_WORDS, DOCUMENT_STATUS_WORDS } from "./words.ts";

/** Invoices and proformas: one record whose number field is named for its kind. */
export const DOCUMENT_STATUSES = DOCUMENT_STATUS_WORDS;
export const documentStatus = z.enum(DOCUMENT_STATUSES);
export const documentKind = z.enum(DOCUMENT_KIND_WORDS);

const documentOf = <K extends "invoice" | "proforma">(kind: K) =>
  z.object({
    id: z.uuid(),
    type: z.literal(kind),
    ...({ [`${kind}_number`]: z.string() } as Record<`${K}_number`, z.ZodString>),
    number: z.string(),
    status: documentStatus,
    total: z.number(),
    amount_paid: z.number(),
    amount_due: z.number(),
    currency,
    purpose: z.enum(DOCUMENT_PURPOSE_WORDS),
    order_id: z.uuid().nullable(),
    service_id: z.uuid().nullable(),
    converted_invoice_id: z.uuid().nullable().meta({ description: "a paid proforma: the invoice it became" }),
    order_number: z.string().nullable().meta({ description: "the number (ORD-…) of the order it bills" }),
    service_hostname: z
      .string()
      .nullable()
      .meta({ description: "the hostname of the service it bills, when it bills one service" }),
    converted_invoice_number: z
      .string()
      .nullable()
      .meta({ description: "a paid proforma: the number (INV-…) of the invoice it became" }),
    from_proforma_number: z.string().nullable().meta({
      description:
        "an invoice a paid proforma became: that proforma's number (PRO-…); the two are one charge, not two",
    }),
    created_at: z.iso.datetime(),
    due_date: z.iso.datetime(),
    paid_at: z.iso.datetime().nullable(),
  });

/** The invoice record: in the list, the order creation result, the upgrade's document, ... */
export const invoice = documentOf("invoice");
export const proforma = documentOf("proforma");
/** Either kind (an order's documents). */
export const billingDocument = z.discriminatedUnion("type", [invoice, proforma]);

const lineItem = z.object({
  id: z.uuid(),
  description: z.string(),
  amount: decimal4,
  service_id: z.uuid().nullable(),
});
/** The detail adds the line items. */
export const invoiceDetail = invoice.extend({ items: z.array(lineItem) });
export const proformaDetail = proforma.extend({ items: z.array(lineItem) });

const statsByStatus = z.object({ count: z.int().min(0), total: z.number(), amount_due: z.number() });
/** The stats object of the invoices and proformas lists: counts and money totals by status. */
export const documentStats = z.object({
  count: z.int().min(0),
  by_status: z.partialRecord(documentStatus, statsByStatus),
});

export const invoiceList = z.object({ invoices: z.array(invoice), pagination, stats: documentStats });
export const proformaList = z.object({ proformas: z.array(proforma), pagination, stats: documentStats });

/** The spec's payment result (data of the pay routes); `message` sits beside it. */
const paidInvoice = z.object({ id: z.uuid(), invoice_number: z.string(), status: documentStatus });
export const invoicePayment = z.object({
  creditApplied: z.number(),
  newBalance: z.number(),
  remainingAmount: z.number(),
  invoice: paidInvoice,
});
export const proformaPayment = z.object({
  creditApplied: z.number(),
  newBalance: z.number(),
  remainingAmount: z.number(),
  proformaPaid: z.boolean(),
  invoice: paidInvoice.nullable().meta({ description: "the invoice the proforma converted into, once paid" }),
});

export const invoiceExample = {
  id: "0195e3a1-0a1b-7c2d-8e3f-4a5b6c7d8e9f",
  type: "invoice" as const,
  invoice_number: "INV-2026-1042",
  number: "INV-2026-1042",
  status: "unpaid",
  total: 12.5,
  amount_paid: 0,
  amount_due: 12.5,
  currency: "EUR",
  purpose: "renewal",
  order_id: null,
  service_id: "0195e3a0-7c1e-7b3a-9f5e-2d4c6a8b0c11",
  converted_invoice_id: null,
  order_number: null,
  service_hostname: "web-1.example.com",
  converted_invoice_number: null,
  from_proforma_number: null,
  created_at: "2026-11-23T10:00:00.000Z",
  due_date: "2026-11-30T10:00:00.000Z",
  paid_at: null,
};

export const proformaExample = {
  id: "0195e3a0-7d00-7e1f-8a2b-3c4d5e6f7a8b",
  type: "proforma" as const,
  proforma_number: "PRO-2026-311",
  number: "PRO-2026-311",
  status: "unpaid",
  total: 12.5,
  amount_paid: 0,
  amount_due: 12.5,
  currency: "EUR",
  purpose: "order",
  order_id: "0195e3a0-7b00-7d1e-8f20-3a4b5c6d7e8f",
  service_id: null,
  converted_invoice_id: null,
  order_number: "ORD-5120",
  service_hostname: null,
  converted_invoice_number: null,
  from_proforma_number: null,
  created_at: "2026-11-23T10:00:00.000Z",
  due_date: "2026-11-30T10:00:00.000Z",
  paid_at: null,
};

const lineExample = {
  id: "0195e3a1-0a1c-7d2e-8f3a-4b5c6d7e8f90",
  description: "Renewal of VPS Small (monthly) 2026-12-23 – 2027-01-23",
  amount: "12.5000",
  service_id: "0195e3a0-7c1e-7b3a-9f5e-2d4c6a8b0c11",
};
export const invoiceDetailExample = { ...invoiceExample, items: [lineExample] };
export const proformaDetailExample = {
  ...proformaExample,
  items: [{ ...lineExample, description: "VPS Small (monthly)" }],
};

const statsExample = {
  count: 1,
  by_status: { unpaid: { count: 1, total: 12.5, amount_due: 12.5 } },
};
export const invoiceListExample = {
  invoices: [invoiceExample],
  pagination: paginationExample,
  stats: statsExample,
};
export const proformaListExample = {
  proformas: [proformaExample],
  pagination: paginationExample,
  stats: statsExample,
};

export const invoicePaymentExample = {
  creditApplied: 12.5,
  newBalance: 87.5,
  remainingAmount: 0,
  invoice: { id: invoiceExample.id, invoice_number: invoiceExample.invoice_number, status: "paid" },
};
export const proformaPaymentExample = {
  creditApplied: 12.5,
  newBalance: 87.5,
  remainingAmount: 0,
  proformaPaid: true,
  invoice: { id: "0195e3a1-2b3c-7d4e-8f5a-6b7c8d9e0f1a", invoice_number: "INV-2026-1043", status: "paid" },
};
