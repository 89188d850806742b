import { type ServiceStatus, ServiceStatusSchema } from "@hb/contracts/hb/billing/v1/common_pb";
import {
  type OrderStatus,
  OrderStatusSchema,
  type PaymentMode,
  PaymentModeSchema,
} from "@hb/contracts/hb/events/v1/events_pb";
import { enumOfWord, type TxSql, writeOutbox } from "@hb/platform";
import type { OrderRow, ServiceRow } from "./records.ts";

// Billing's status and mode columns hold the enums' words.
const serviceStatus = (column: string) => enumOfWord<ServiceStatus>(ServiceStatusSchema, column);

/** Order events (data per the spec's Events section), written in the caller's transaction. */
export async function orderEvent(
  tx: TxSql,
  ns: string,
  type: "order.paid" | "order.invoiced" | "order.payment_failed",
  order: OrderRow,
  extra: { invoiceId?: string; paymentError?: string } = {},
) {
  await writeOutbox(tx, ns, {
    type,
    partnerId: order.partner_id ?? "",
    payload: {
      case: "order",
      value: {
        orderId: order.id,
        orderNumber: order.order_number,
        externalOrderId: order.external_order_id ?? "",
        externalCustomerId: order.external_customer_id ?? "",
        status: enumOfWord<OrderStatus>(OrderStatusSchema, order.status),
        paymentMode: enumOfWord<PaymentMode>(PaymentModeSchema, order.payment_mode),
        amount: { currency: order.currency, amount: order.total },
        invoiceId: extra.invoiceId ?? "",
        paymentError: extra.paymentError ?? "",
      },
    },
  });
}

export async function serviceEvent(
  tx: TxSql,
  ns: string,
  type:
    | "service.provisioned"
    | "service.provisioning_failed"
    | "service.suspended"
    | "service.unsuspended"
    | "service.terminated",
  s: ServiceRow,
  order: OrderRow | undefined,
  reason = "",
) {
  await writeOutbox(tx, ns, {
    type,
    partnerId: s.partner_id ?? "",
    payload: {
      case: "service",
      value: {
        serviceId: s.id,
        orderId: s.order_id ?? "",
        externalOrderId: order?.external_order_id ?? "",
        externalCustomerId: order?.external_customer_id ?? "",
        status: serviceStatus(s.status),
        serverIp: s.server_ip,
        hostname: s.hostname,
        reason,
      },
    },
  });
}
