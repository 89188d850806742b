import type { PayDocumentResponse } from "@hb/contracts/hb/billing/v1/billing_pb";
import { type Document, DocumentKind } from "@hb/contracts/hb/billing/v1/documents_pb";
import type { z } from "zod";
import type { proforma, proformaDetail, proformaPayment } from "../wire/invoice.ts";
import { amountNumber } from "./contract.ts";
import { documentFields, documentLines } from "./document.ts";
import { paidInvoiceJson } from "./invoice.ts";

/** The proforma record (lists, an order's documents, the order creation result). */
export function proformaJson(d: Document): z.infer<typeof proforma> {
  if (d.kind !== DocumentKind.PROFORMA) throw new Error(`document ${d.id} is not a proforma`);
  const { id, ...fields } = documentFields(d);
  return { id, type: "proforma", proforma_number: d.number, ...fields };
}

/** GET /proformas/{id}: the record with its line items. */
export const proformaDetailJson = (d: Document): z.infer<typeof proformaDetail> => ({
  ...proformaJson(d),
  items: documentLines(d),
});

/** POST /proformas/{id}/pay: a fully paid proforma names the invoice it became. */
export const proformaPaymentJson = (r: PayDocumentResponse): z.infer<typeof proformaPayment> => ({
  creditApplied: amountNumber(r.creditApplied),
  newBalance: amountNumber(r.newBalance),
  remainingAmount: amountNumber(r.remainingAmount),
  proformaPaid: r.fullyPaid,
  invoice: r.invoice ? paidInvoiceJson(r.invoice) : null,
});
