import type { z } from "zod";
import type { invoice } from "../../wire/invoice.ts";
import { type Html, html } from "../html.ts";
import { badge } from "./ui.ts";

/**
 * How the portal names what a record points at (issue 29 §3): a service by its hostname, an order
 * by its number (ORD-…), a document by its number (INV-…, PRO-…), each linked to its page. The
 * names come with the records (billing reads them with the document), never from a call per row.
 */
type Doc = Pick<
  z.infer<typeof invoice>,
  | "status"
  | "purpose"
  | "order_id"
  | "order_number"
  | "service_id"
  | "service_hostname"
  | "converted_invoice_id"
  | "converted_invoice_number"
  | "from_proforma_number"
>;

export const serviceLink = (id: string, hostname?: string | null) =>
  html`<a href="/portal/services/${id}">${hostname || id}</a>`;
export const orderLink = (id: string, number?: string | null) =>
  html`<a href="/portal/orders/${id}">${number || id}</a>`;
export const invoiceLink = (id: string, number?: string | null) =>
  html`<a href="/portal/invoices/${id}">${number || id}</a>`;

/** What a document bills: its purpose, the service by hostname and the order by number. */
export function documentFor(d: Doc): Html {
  return html`${d.purpose.replaceAll("_", " ")}${d.service_id ? html` of ${serviceLink(d.service_id, d.service_hostname)}` : ""}${d.order_id ? html` (order ${orderLink(d.order_id, d.order_number)})` : ""}`;
}

/**
 * A document's status, and for a proforma that became an invoice, which: the one payment is
 * recorded on that invoice, so the proforma must not read like a second charge.
 */
export function documentStatus(d: Doc): Html {
  if (d.converted_invoice_id) {
    return html`<span class="converted">became ${invoiceLink(d.converted_invoice_id, d.converted_invoice_number)}, ${badge(d.status)}</span>`;
  }
  if (d.from_proforma_number) {
    return html`${badge(d.status)} <span class="hint">(was ${d.from_proforma_number})</span>`;
  }
  return badge(d.status);
}

/** The sentence under a converted document's facts: the proforma and its invoice are one charge. */
export function oneCharge(d: Doc): Html | string {
  if (d.converted_invoice_id) {
    return html`<p class="notice" id="one-charge">This proforma was paid and became invoice ${invoiceLink(d.converted_invoice_id, d.converted_invoice_number)}: one payment, recorded on that invoice, not a second charge.</p>`;
  }
  if (d.from_proforma_number) {
    return html`<p class="notice" id="one-charge">This invoice is what proforma ${d.from_proforma_number} became when it was paid: one payment, not a second charge.</p>`;
  }
  return "";
}
