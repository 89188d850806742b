import type { ServiceAddons } from "@hb/contracts/hb/billing/v1/addons_pb";
import { type Document, DocumentKind } from "@hb/contracts/hb/billing/v1/documents_pb";
import type { Order, PlacedOrder } from "@hb/contracts/hb/billing/v1/orders_pb";
import type { ServiceSummary } from "@hb/contracts/hb/billing/v1/services_pb";
import type { z } from "zod";
import type { listedOrder, order, orderCreation, orderDetail, orderDocument } from "../wire/order.ts";
import { addonJson } from "./addon.ts";
import { amountNumber, iso, orNull, required } from "./contract.ts";
import {
  documentStatusWords,
  orderPaymentStatusWords,
  orderStatusWords,
  serviceStatusWords,
} from "./enums.ts";
import { invoiceJson } from "./invoice.ts";
import { proformaJson } from "./proforma.ts";
import { serviceSummaryJson } from "./service.ts";

/** The order record of the list. */
export function orderJson(o: Order): z.infer<typeof order> {
  return {
    id: o.id,
    order_number: o.number,
    status: orderStatusWords.wire(o.status),
    payment_status: orderPaymentStatusWords.wire(o.paymentStatus),
    total: amountNumber(o.total),
    currency: required(o.total, "order total").currency,
    created_at: iso(o.createdAt),
  };
}

/** The order record of the list, with how its services stand. */
export function listedOrderJson(o: Order): z.infer<typeof listedOrder> {
  const byStatus: Partial<Record<string, number>> = {};
  for (const s of o.services) {
    const w = serviceStatusWords.wire(s.status);
    byStatus[w] = (byStatus[w] ?? 0) + 1;
  }
  return { ...orderJson(o), services_by_status: byStatus };
}

/** Either kind of document, as an order lists its documents. */
const billingDocumentJson = (d: Document) =>
  d.kind === DocumentKind.PROFORMA ? proformaJson(d) : invoiceJson(d);

/**
 * GET /orders/{id}: the order, each service's billing record (with its add-ons when they were
 * read: `addons` is undefined for a person who may not view services), and its documents.
 */
export function orderDetailJson(
  o: Order,
  services: ServiceSummary[],
  addons?: ServiceAddons[],
): z.infer<typeof orderDetail> {
  const failures = new Map(o.services.map((s) => [s.id, s.failureReason]));
  const held = addons && new Map(addons.map((a) => [a.serviceId, a.addons.map(addonJson)]));
  return {
    ...orderJson(o),
    payment_error: orNull(o.paymentError),
    services: services.map((s) => ({
      ...serviceSummaryJson(s),
      order_id: o.id,
      failure_reason: orNull(failures.get(s.id)),
      // A service made after the add-ons were read (the two reads run side by side) has none yet.
      ...(held ? { options: held.get(s.id) ?? [] } : {}),
    })),
    documents: o.documents.map(billingDocumentJson),
  };
}

/** What to pay, or what credit paid: the invoice when settled, else the proforma; none for hourly-only orders. */
export function orderDocumentJson(p: PlacedOrder): z.infer<typeof orderDocument> | null {
  const doc = p.invoice ?? p.proforma;
  if (!doc) return null;
  return {
    type: doc.kind === DocumentKind.PROFORMA ? "proforma" : "invoice",
    id: doc.id,
    status: documentStatusWords.wire(doc.status),
    total: amountNumber(doc.total),
    settled: p.settled,
  };
}

/** The next thing the customer should do after placing an order. */
function nextStep(p: PlacedOrder, o: Order): string {
  if (!p.proforma) {
    return "Hourly services are charged from your credit each hour, without a document. Provisioning has started.";
  }
  if (p.settled)
    return "Paid from credit. Provisioning has started; poll GET /services/{id} until it is active.";
  const total = required(o.total, "order total");
  return `Pay proforma ${p.proforma.number} with POST /api/v1/proformas/${p.proforma.id}/pay once your credit balance covers ${amountNumber(total)} ${total.currency}.`;
}

/** POST /orders (201): the order, its services, its documents and whether credit settled it. */
export function orderCreationJson(p: PlacedOrder): z.infer<typeof orderCreation> {
  const o = required(p.order, "order");
  return {
    order: { ...orderJson(o), payment_error: orNull(o.paymentError) },
    services: o.services.map((s) => ({
      id: s.id,
      status: serviceStatusWords.wire(s.status),
      hostname: s.hostname,
      product_id: s.productId,
    })),
    proforma: p.proforma ? proformaJson(p.proforma) : null,
    invoice: p.invoice ? invoiceJson(p.invoice) : null,
    document: orderDocumentJson(p),
    settled: p.settled,
    next_step: nextStep(p, o),
    credit_balance: amountNumber(p.creditBalance),
  };
}
