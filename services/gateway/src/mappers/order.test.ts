import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import {
  DocumentKind,
  DocumentPurpose,
  DocumentSchema,
  DocumentStatus,
} from "@hb/contracts/hb/billing/v1/documents_pb";
import {
  OrderPaymentMode,
  OrderPaymentStatus,
  OrderProvisioningStatus,
  OrderStatus,
  PlacedOrderSchema,
} from "@hb/contracts/hb/billing/v1/orders_pb";
import { orderCreation } from "../wire/order.ts";
import { resellerOrderCreation } from "../wire/reseller.ts";
import { orderCreationJson } from "./order.ts";
import { resellerOrderCreationJson } from "./reseller-order.ts";

const at = timestampFromDate(new Date("2026-11-23T10:00:00.000Z"));
const eur = (amount: string) => ({ currency: "EUR", amount });
const ids = {
  order: "0195e3a0-7b00-7d1e-8f20-3a4b5c6d7e8f",
  service: "0195e3a0-7c1e-7b3a-9f5e-2d4c6a8b0c11",
  product: "0195e39f-1a2b-7c3d-8e4f-5a6b7c8d9e01",
  proforma: "0195e3a0-7d00-7e1f-8a2b-3c4d5e6f7a8b",
  invoice: "0195e3a1-2b3c-7d4e-8f5a-6b7c8d9e0f1a",
};

const order = {
  id: ids.order,
  number: "ORD-5120",
  status: OrderStatus.PENDING,
  paymentStatus: OrderPaymentStatus.UNPAID,
  paymentMode: OrderPaymentMode.CREDIT,
  provisioningStatus: OrderProvisioningStatus.NOT_STARTED,
  total: eur("12.5000"),
  createdAt: at,
  services: [
    {
      id: ids.service,
      status: ServiceStatus.PENDING_PAYMENT,
      hostname: "web-1",
      productId: ids.product,
      productName: "VPS Small",
    },
  ],
};

const document = (kind: DocumentKind, id: string, status: DocumentStatus) =>
  create(DocumentSchema, {
    id,
    kind,
    number: kind === DocumentKind.INVOICE ? "INV-2026-1" : "PRO-2026-1",
    status,
    total: eur("12.5000"),
    amountPaid: eur(status === DocumentStatus.UNPAID ? "0.0000" : "12.5000"),
    amountDue: eur(status === DocumentStatus.UNPAID ? "12.5000" : "0.0000"),
    purpose: DocumentPurpose.ORDER,
    orderId: ids.order,
    createdAt: at,
    dueDate: at,
  });

describe("the order creation result", () => {
  it("asks for the proforma to be paid, with its pay route and the total, when credit did not settle it", () => {
    const placed = create(PlacedOrderSchema, {
      order,
      proforma: document(DocumentKind.PROFORMA, ids.proforma, DocumentStatus.UNPAID),
      settled: false,
      creditBalance: eur("3.0000"),
    });
    const wire = orderCreation.parse(orderCreationJson(placed));
    assert.equal(
      wire.next_step,
      `Pay proforma PRO-2026-1 with POST /api/v1/proformas/${ids.proforma}/pay once your credit balance covers 12.5 EUR.`,
    );
    assert.deepEqual(wire.document, {
      type: "proforma",
      id: ids.proforma,
      status: "unpaid",
      total: 12.5,
      settled: false,
    });
    assert.equal(wire.invoice, null);
    assert.equal(wire.credit_balance, 3);
    assert.deepEqual(wire.services, [
      { id: ids.service, status: "pending_payment", hostname: "web-1", product_id: ids.product },
    ]);
  });

  it("names the invoice credit paid as the document once settled", () => {
    const placed = create(PlacedOrderSchema, {
      order: { ...order, status: OrderStatus.ACTIVE, paymentStatus: OrderPaymentStatus.PAID },
      proforma: document(DocumentKind.PROFORMA, ids.proforma, DocumentStatus.PAID),
      invoice: document(DocumentKind.INVOICE, ids.invoice, DocumentStatus.PAID),
      settled: true,
      creditBalance: eur("0.0000"),
    });
    const wire = orderCreation.parse(orderCreationJson(placed));
    assert.equal(wire.document?.type, "invoice");
    assert.equal(wire.document?.id, ids.invoice);
    assert.match(wire.next_step, /^Paid from credit/);
    const reseller = resellerOrderCreation.parse(resellerOrderCreationJson(placed));
    assert.deepEqual(reseller.document, wire.document);
    assert.equal(reseller.payment_mode, "credit");
  });

  it("has no document for an order of hourly items only", () => {
    const placed = create(PlacedOrderSchema, { order, settled: true, creditBalance: eur("9.9800") });
    const wire = orderCreation.parse(orderCreationJson(placed));
    assert.equal(wire.document, null);
    assert.equal(wire.proforma, null);
    assert.match(wire.next_step, /^Hourly services are charged from your credit each hour/);
  });
});
