import { type ServiceStatus, ServiceStatusSchema } from "@hb/contracts/hb/billing/v1/common_pb";
import {
  type OrderStatus,
  OrderStatusSchema,
  type PaymentMode,
  PaymentModeSchema,
} from "@hb/contracts/hb/events/v1/events_pb";
import { type EventInit, enumOfWord, type TxSql, writeOutbox, writeOutboxBatch } from "@hb/platform";
import { type OrderRow, type ServiceRow, summaryOut } from "./records.ts";
import { recordedAlong } from "./service-records.ts";

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
  await writeOutbox(tx, ns, orderEventInit(type, order, extra));
}

/** An order event as written, for a caller that writes it with others in one statement. */
export function orderEventInit(
  type: "order.paid" | "order.invoiced" | "order.payment_failed",
  order: OrderRow,
  extra: { invoiceId?: string; paymentError?: string } = {},
): EventInit {
  return {
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
  };
}

type ServiceEventType =
  | "service.provisioned"
  | "service.provisioning_failed"
  | "service.suspended"
  | "service.unsuspended"
  | "service.terminated";

export async function serviceEvent(
  tx: TxSql,
  ns: string,
  type: ServiceEventType,
  s: ServiceRow,
  order: OrderRow | undefined,
  reason = "",
) {
  await serviceEvents(tx, ns, [{ type, s, order, reason }]);
}

/** Service events of many services (a batch of build reports), in the given order, in one statement. */
export async function serviceEvents(
  tx: TxSql,
  ns: string,
  items: { type: ServiceEventType; s: ServiceRow; order: OrderRow | undefined; reason: string }[],
) {
  if (items.length === 0) return;
  // The record rides on the event: compute's copy of the service (service-records.ts) needs no
  // statement of its own for a change that raises a service event.
  const events = await writeOutboxBatch(
    tx,
    ns,
    items.map(({ type, s, order, reason }) => ({
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
          record: summaryOut(s),
        },
      },
    })),
  );
  recordedAlong(
    tx,
    events,
    items.map(({ s }) => s.id),
  );
}
