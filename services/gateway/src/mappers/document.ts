import type { Document, DocumentStatusTotals } from "@hb/contracts/hb/billing/v1/documents_pb";
import type { z } from "zod";
import type { documentStats } from "../wire/invoice.ts";
import { amountNumber, decimal4, iso, orNull, required } from "./contract.ts";
import { documentPurposeWords, documentStatusWords } from "./enums.ts";

/** What invoices and proformas share on the wire; each kind's mapper adds its number field. */
export function documentFields(d: Document) {
  return {
    id: d.id,
    number: d.number,
    status: documentStatusWords.wire(d.status),
    total: amountNumber(d.total),
    amount_paid: amountNumber(d.amountPaid),
    amount_due: amountNumber(d.amountDue),
    currency: required(d.total, "document total").currency,
    purpose: documentPurposeWords.wire(d.purpose),
    order_id: orNull(d.orderId),
    service_id: orNull(d.serviceId),
    converted_invoice_id: orNull(d.convertedInvoiceId),
    order_number: orNull(d.orderNumber),
    service_hostname: orNull(d.serviceHostname),
    converted_invoice_number: orNull(d.convertedInvoiceNumber),
    from_proforma_number: orNull(d.fromProformaNumber),
    created_at: iso(d.createdAt),
    due_date: iso(d.dueDate),
    paid_at: d.paidAt ? iso(d.paidAt) : null,
  };
}

/** A document's line items (the detail routes). */
export const documentLines = (d: Document) =>
  d.lines.map((l) => ({
    id: l.id,
    description: l.description,
    amount: decimal4(l.amount),
    service_id: orNull(l.serviceId),
  }));

/** The stats object of the invoices and proformas lists. */
export function documentStatsJson(byStatus: DocumentStatusTotals[]): z.infer<typeof documentStats> {
  return {
    count: byStatus.reduce((n, s) => n + s.count, 0),
    by_status: Object.fromEntries(
      byStatus.map((s) => [
        documentStatusWords.wire(s.status),
        { count: s.count, total: amountNumber(s.total), amount_due: amountNumber(s.amountDue) },
      ]),
    ),
  };
}
