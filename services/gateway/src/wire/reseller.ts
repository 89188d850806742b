import { z } from "zod";
import { currency } from "./money.ts";
import { orderDocument, orderStatus, paymentStatus } from "./order.ts";
import { productRef, serviceStatus } from "./service.ts";

const address = z.string().nullable().meta({ description: "the server's address, null until built" });

/** A service as a reseller order row carries it (status, hostname, address). */
const resellerOrderService = z.object({
  id: z.uuid(),
  status: serviceStatus,
  hostname: z.string(),
  address,
  product: productRef,
});

/** A reseller order row with its services. */
export const resellerOrder = z.object({
  id: z.uuid(),
  order_number: z.string(),
  external_order_id: z.string().nullable(),
  external_customer_id: z.string().nullable(),
  status: orderStatus,
  payment_status: paymentStatus,
  payment_mode: z.enum(["credit", "invoice"]),
  provisioning_status: z.enum(["not_started", "in_progress", "completed", "failed"]),
  failure_reason: z.string().nullable(),
  total: z.number(),
  currency,
  created_at: z.iso.datetime(),
  services: z.array(resellerOrderService),
});

export const resellerOrderList = z.object({ orders: z.array(resellerOrder) });

/** POST /reseller/orders: the order row, whether credit settled it, and its document. */
export const resellerOrderCreation = resellerOrder.extend({
  settled: z.boolean(),
  document: orderDocument.nullable(),
});

/** POST /reseller/orders/{orderId}/retry-payment: the order row and the credit left. */
export const resellerPaymentRetry = resellerOrder.extend({ credit_balance: z.number() });

/** A service the partner holds. */
export const resellerService = z.object({
  id: z.uuid(),
  order_id: z.uuid().nullable(),
  external_order_id: z.string().nullable(),
  external_customer_id: z.string().nullable(),
  status: serviceStatus,
  hostname: z.string(),
  address,
  product: productRef,
  failure_reason: z.string().nullable(),
});

export const resellerServiceList = z.object({ services: z.array(resellerService) });

/** Suspend, unsuspend, terminate: the service's new state. */
export const resellerServiceState = z.object({
  id: z.uuid(),
  status: serviceStatus,
  hostname: z.string(),
  address,
});

export const webhookSetting = z.object({
  webhookUrl: z.string().nullable().meta({ description: "null once cleared" }),
});

export const webhookTest = z.object({
  deliveryId: z.uuid(),
  event: z.literal("webhook.test"),
  status: z.literal("pending"),
});

const product = { id: "0195e39f-1a2b-7c3d-8e4f-5a6b7c8d9e01", name: "VPS Small" };
const serviceId = "0195e3a0-7c1e-7b3a-9f5e-2d4c6a8b0c11";

export const resellerOrderExample = {
  id: "0195e3a0-7b00-7d1e-8f20-3a4b5c6d7e8f",
  order_number: "ORD-5120",
  external_order_id: "shop-10045",
  external_customer_id: "cust-778",
  status: "active",
  payment_status: "paid",
  payment_mode: "credit",
  provisioning_status: "completed",
  failure_reason: null,
  total: 12.5,
  currency: "EUR",
  created_at: "2026-11-23T10:00:00.000Z",
  services: [
    { id: serviceId, status: "active", hostname: "web-1.example.com", address: "203.0.113.10", product },
  ],
};

export const resellerOrderListExample = { orders: [resellerOrderExample] };

export const resellerOrderCreationExample = {
  ...resellerOrderExample,
  status: "active",
  payment_status: "paid",
  provisioning_status: "not_started",
  services: [{ ...resellerOrderExample.services[0], status: "pending", address: null }],
  settled: true,
  document: {
    type: "invoice",
    id: "0195e3a1-2b3c-7d4e-8f5a-6b7c8d9e0f1a",
    status: "paid",
    total: 12.5,
    settled: true,
  },
};

export const resellerPaymentRetryExample = {
  ...resellerOrderExample,
  provisioning_status: "in_progress",
  services: [{ ...resellerOrderExample.services[0], status: "installing", address: null }],
  credit_balance: 37.5,
};

export const resellerServiceListExample = {
  services: [
    {
      id: serviceId,
      order_id: resellerOrderExample.id,
      external_order_id: "shop-10045",
      external_customer_id: "cust-778",
      status: "active",
      hostname: "web-1.example.com",
      address: "203.0.113.10",
      product,
      failure_reason: null,
    },
  ],
};

export const resellerServiceStateExample = {
  id: serviceId,
  status: "suspended",
  hostname: "web-1.example.com",
  address: "203.0.113.10",
};
