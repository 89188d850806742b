import type { PayDocumentResponse } from "@hb/contracts/hb/billing/v1/billing_pb";
import { type Document, DocumentKind } from "@hb/contracts/hb/billing/v1/documents_pb";
import type { z } from "zod";
import type { invoice, invoiceDetail, invoicePayment } from "../wire/invoice.ts";
import { amountNumber, required } from "./contract.ts";
import { documentFields, documentLines } from "./document.ts";
import { documentStatusWords } from "./enums.ts";

function asInvoice(d: Document): Document {
  if (d.kind !== DocumentKind.INVOICE) throw new Error(`document ${d.id} is not an invoice`);
  return d;
}

/** The invoice record (lists, renewals, an order's documents, the order creation result). */
export function invoiceJson(d: Document): z.infer<typeof invoice> {
  asInvoice(d);
  const { id, ...fields } = documentFields(d);
  return { id, type: "invoice", invoice_number: d.number, ...fields };
}

/** GET /invoices/{id}: the record with its line items. */
export const invoiceDetailJson = (d: Document): z.infer<typeof invoiceDetail> => ({
  ...invoiceJson(d),
  items: documentLines(d),
});

/** The invoice a payment produced or settled, as the pay results name it. */
export const paidInvoiceJson = (d: Document) => ({
  id: asInvoice(d).id,
  invoice_number: d.number,
  status: documentStatusWords.wire(d.status),
});

/** POST /invoices/{id}/pay. */
export const invoicePaymentJson = (r: PayDocumentResponse): z.infer<typeof invoicePayment> => ({
  creditApplied: amountNumber(r.creditApplied),
  newBalance: amountNumber(r.newBalance),
  remainingAmount: amountNumber(r.remainingAmount),
  invoice: paidInvoiceJson(required(r.invoice, "paid invoice")),
});
