import type { RetryResellerPaymentResponse } from "@hb/contracts/hb/billing/v1/billing_pb";
import type { Order, PlacedOrder } from "@hb/contracts/hb/billing/v1/orders_pb";
import type { z } from "zod";
import type { resellerOrder, resellerOrderCreation, resellerPaymentRetry } from "../wire/reseller.ts";
import { amountNumber, iso, orNull, required } from "./contract.ts";
import {
  orderPaymentModeWords,
  orderPaymentStatusWords,
  orderStatusWords,
  provisioningStatusWords,
  serviceStatusWords,
} from "./enums.ts";
import { orderDocumentJson } from "./order.ts";

/** A reseller order row with its services (status, hostname, address). */
export function resellerOrderJson(o: Order): z.infer<typeof resellerOrder> {
  return {
    id: o.id,
    order_number: o.number,
    external_order_id: orNull(o.externalOrderId),
    external_customer_id: orNull(o.externalCustomerId),
    status: orderStatusWords.wire(o.status),
    payment_status: orderPaymentStatusWords.wire(o.paymentStatus),
    payment_mode: orderPaymentModeWords.wire(o.paymentMode),
    provisioning_status: provisioningStatusWords.wire(o.provisioningStatus),
    failure_reason: orNull(o.failureReason),
    total: amountNumber(o.total),
    currency: required(o.total, "order total").currency,
    created_at: iso(o.createdAt),
    services: o.services.map((s) => ({
      id: s.id,
      status: serviceStatusWords.wire(s.status),
      hostname: s.hostname,
      address: orNull(s.address),
      product: { id: s.productId, name: s.productName },
    })),
  };
}

/** POST /reseller/orders (201): the row, whether credit settled it, and its document. */
export const resellerOrderCreationJson = (p: PlacedOrder): z.infer<typeof resellerOrderCreation> => ({
  ...resellerOrderJson(required(p.order, "order")),
  settled: p.settled,
  document: orderDocumentJson(p),
});

/** POST /reseller/orders/{orderId}/retry-payment: the row and the credit left. */
export const resellerPaymentRetryJson = (
  r: RetryResellerPaymentResponse,
): z.infer<typeof resellerPaymentRetry> => ({
  ...resellerOrderJson(required(r.order, "order")),
  credit_balance: amountNumber(r.creditBalance),
});
