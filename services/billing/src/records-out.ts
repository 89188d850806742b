import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Document, DocumentSchema } from "@hb/contracts/hb/billing/v1/documents_pb";
import type { OrderSchema, OrderServiceSchema } from "@hb/contracts/hb/billing/v1/orders_pb";
import { moneyOut } from "./contract-values.ts";
import {
  documentKind,
  documentPurpose,
  documentStatus,
  orderPaymentMode,
  orderPaymentStatus,
  orderProvisioningStatus,
  orderStatus,
  serviceStatus,
} from "./enums.ts";
import { money } from "./money.ts";
import type { DocumentRow, LineRow, OrderRow, ServiceRow } from "./records.ts";

/** An invoice or proforma; its lines only when given (the detail). */
export function documentOut(d: DocumentRow, lines: LineRow[] = []): Document {
  const total = money(d.total);
  const paid = money(d.amount_paid);
  return create(DocumentSchema, {
    id: d.id,
    kind: documentKind.out(d.kind),
    number: d.number,
    status: documentStatus.out(d.status),
    total: moneyOut(total, d.currency),
    amountPaid: moneyOut(paid, d.currency),
    // A cancelled document owes nothing (its part-payments went back).
    amountDue: moneyOut(d.status === "unpaid" ? total - paid : 0n, d.currency),
    purpose: documentPurpose.out(d.purpose),
    orderId: d.order_id ?? undefined,
    serviceId: d.service_id ?? undefined,
    convertedInvoiceId: d.converted_to ?? undefined,
    createdAt: timestampFromDate(d.created_at),
    dueDate: timestampFromDate(d.due_date),
    paidAt: d.paid_at ? timestampFromDate(d.paid_at) : undefined,
    orderNumber: d.order_number ?? undefined,
    serviceHostname: d.service_hostname || undefined,
    convertedInvoiceNumber: d.converted_invoice_number ?? undefined,
    fromProformaNumber: d.from_proforma_number ?? undefined,
    lines: lines.map((l) => ({
      id: l.id,
      description: l.description,
      amount: moneyOut(money(l.amount), d.currency),
      serviceId: l.service_id ?? undefined,
    })),
  });
}

/** Where the building of an order's services stands. */
export function provisioningStatus(services: ServiceRow[]) {
  if (services.some((s) => s.status === "provisioning_failed")) return "failed";
  if (services.length > 0 && services.every((s) => ["active", "suspended", "terminated"].includes(s.status)))
    return "completed";
  if (services.some((s) => ["pending", "installing"].includes(s.status))) return "in_progress";
  return "not_started";
}

const orderServiceOut = (s: ServiceRow): MessageInitShape<typeof OrderServiceSchema> => ({
  id: s.id,
  status: serviceStatus.out(s.status),
  hostname: s.hostname,
  productId: s.product_id,
  productName: s.product_name,
  address: s.server_ip || undefined,
  failureReason: s.failure_reason ?? undefined,
});

/**
 * An order with the services it produced (those given) and its documents (those given). The
 * failure reason is the payment error, else the first failed service's reason.
 */
export function orderOut(
  o: OrderRow,
  services: ServiceRow[] = [],
  documents: DocumentRow[] = [],
): MessageInitShape<typeof OrderSchema> {
  const failed = services.find((s) => s.status === "provisioning_failed");
  return {
    id: o.id,
    number: o.order_number,
    status: orderStatus.out(o.status),
    paymentStatus: orderPaymentStatus.out(o.payment_status),
    paymentMode: orderPaymentMode.out(o.payment_mode),
    provisioningStatus: orderProvisioningStatus.out(provisioningStatus(services)),
    total: moneyOut(money(o.total), o.currency),
    createdAt: timestampFromDate(o.created_at),
    paymentError: o.payment_error ?? undefined,
    failureReason: o.payment_error ?? failed?.failure_reason ?? undefined,
    externalOrderId: o.external_order_id ?? undefined,
    externalCustomerId: o.external_customer_id ?? undefined,
    services: services.map(orderServiceOut),
    documents: documents.map((d) => documentOut(d)),
  };
}
