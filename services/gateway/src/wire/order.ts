import { z } from "zod";
import { addon, addonExample } from "./addon.ts";
import {
  billingDocument,
  documentKind,
  documentStatus,
  invoice,
  proforma,
  proformaExample,
} from "./invoice.ts";
import { currency } from "./money.ts";
import { pagination, paginationExample } from "./pagination.ts";
import { serviceRecord, serviceRecordExample, serviceStatus } from "./service.ts";
import { ORDER_PAYMENT_STATUS_WORDS, ORDER_STATUS_WORDS } from "./words.ts";

/** Order states billing writes (the spec shows pending and unpaid and leaves the rest open). */
export const orderStatus = z.enum(ORDER_STATUS_WORDS);
export const paymentStatus = z.enum(ORDER_PAYMENT_STATUS_WORDS);

/** The order record of the list. */
export const order = z.object({
  id: z.uuid(),
  order_number: z.string(),
  status: orderStatus,
  payment_status: paymentStatus,
  total: z.number(),
  currency,
  created_at: z.iso.datetime(),
});

const paymentError = z.string().nullable().meta({ description: "why settling from credit failed" });

/** GET /orders/{id}: the order, the services it produced and its documents. */
export const orderDetail = order.extend({
  payment_error: paymentError,
  services: z.array(
    serviceRecord.extend({
      options: z.array(addon).optional().meta({
        description:
          "the service's add-ons, as GET /services/{id}/options lists them; absent when the person may not view services (View Services)",
      }),
    }),
  ),
  documents: z.array(billingDocument),
});

/** The list's record adds how the order's services stand, so an order whose services are all gone reads so. */
export const listedOrder = order.extend({
  services_by_status: z
    .partialRecord(serviceStatus, z.int().min(0))
    .meta({ description: "how many of the services the order produced are in each status" }),
});

export const orderList = z.object({ orders: z.array(listedOrder), pagination });

/** The order creation result's document: what to pay, or what credit paid. */
export const orderDocument = z.object({
  type: documentKind,
  id: z.uuid(),
  status: documentStatus,
  total: z.number(),
  settled: z.boolean(),
});

/** The spec's order creation result (HTTP 201). */
export const orderCreation = z.object({
  order: order.extend({ payment_error: paymentError }),
  services: z.array(
    z.object({ id: z.uuid(), status: serviceStatus, hostname: z.string(), product_id: z.uuid() }),
  ),
  proforma: proforma.nullable(),
  invoice: invoice.nullable(),
  document: orderDocument
    .nullable()
    .meta({ description: "null when every item is hourly (charged from credit without a document)" }),
  settled: z.boolean().meta({ description: "the field to branch on" }),
  next_step: z.string(),
  credit_balance: z.number(),
});

const orderExample = {
  id: "0195e3a0-7b00-7d1e-8f20-3a4b5c6d7e8f",
  order_number: "ORD-5120",
  status: "pending",
  payment_status: "unpaid",
  total: 12.5,
  currency: "EUR",
  created_at: "2026-11-23T10:00:00.000Z",
};

export const orderListExample = {
  orders: [{ ...orderExample, services_by_status: { pending_payment: 1 } }],
  pagination: paginationExample,
};

export const orderDetailExample = {
  ...orderExample,
  payment_error: null,
  services: [
    {
      ...serviceRecordExample,
      status: "pending_payment",
      options: [{ ...addonExample, status: "pending_payment", paid_amount: "0.0000", next_due_date: null }],
    },
  ],
  documents: [proformaExample],
};

export const orderCreationExample = {
  order: { ...orderExample, payment_error: null },
  services: [
    {
      id: serviceRecordExample.id,
      status: "pending_payment",
      hostname: serviceRecordExample.hostname,
      product_id: serviceRecordExample.product.id,
    },
  ],
  proforma: proformaExample,
  invoice: null,
  document: { type: "proforma", id: proformaExample.id, status: "unpaid", total: 12.5, settled: false },
  settled: false,
  next_step: `Pay proforma PRO-2026-311 with POST /api/v1/proformas/${proformaExample.id}/pay once your credit balance covers 12.5 EUR.`,
  credit_balance: 0,
};
