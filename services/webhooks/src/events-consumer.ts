import { fromBinary } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ServiceStatusSchema } from "@hb/contracts/hb/billing/v1/common_pb";
import {
  type Event,
  EventSchema,
  OrderStatusSchema,
  PaymentModeSchema,
} from "@hb/contracts/hb/events/v1/events_pb";
import {
  type BatchConsumer,
  consumeBatches,
  ensureConsumer,
  enumWord,
  type Logger,
  type NatsConnection,
  type Sql,
  streams,
} from "@hb/platform";

export const PARTNER_EVENTS = new Set([
  "order.paid",
  "order.invoiced",
  "order.payment_failed",
  "service.provisioned",
  "service.provisioning_failed",
  "service.suspended",
  "service.unsuspended",
  "service.terminated",
  "webhook.test",
]);

const orNull = (v: string) => (v === "" ? null : v);

/**
 * The `data` of the webhook envelope, with the fields of the spec's Events section: the partner's
 * wire shape (statuses as the spec's words, the amount as a JSON number) is made here.
 */
export function eventData(e: Event): Record<string, unknown> {
  if (e.payload.case === "order") {
    const o = e.payload.value;
    return {
      orderId: o.orderId,
      orderNumber: o.orderNumber,
      externalOrderId: orNull(o.externalOrderId),
      externalCustomerId: orNull(o.externalCustomerId),
      status: enumWord(OrderStatusSchema, o.status),
      paymentMode: enumWord(PaymentModeSchema, o.paymentMode),
      ...(o.amount?.amount ? { amount: Number(o.amount.amount) } : {}),
      ...(o.invoiceId ? { invoiceId: o.invoiceId } : {}),
      ...(o.paymentError ? { paymentError: o.paymentError } : {}),
      ...(o.provisioningError ? { provisioningError: o.provisioningError } : {}),
      ...(o.services.length
        ? {
            services: o.services.map((s) => ({
              serviceId: s.serviceId,
              status: enumWord(ServiceStatusSchema, s.status),
              hostname: s.hostname,
              serverIp: s.serverIp,
            })),
          }
        : {}),
    };
  }
  if (e.payload.case === "service") {
    const s = e.payload.value;
    return {
      serviceId: s.serviceId,
      orderId: orNull(s.orderId),
      externalOrderId: orNull(s.externalOrderId),
      externalCustomerId: orNull(s.externalCustomerId),
      status: enumWord(ServiceStatusSchema, s.status),
      serverIp: orNull(s.serverIp),
      hostname: s.hostname,
      ...(s.reason ? { reason: s.reason } : {}),
    };
  }
  if (e.payload.case === "webhookTest") return { message: e.payload.value.message };
  return {};
}

/**
 * Turns partner events into pending deliveries. Idempotent (the event id is unique per delivery),
 * acked only after commit. An event raised while the partner has no URL on file is dropped.
 */
export async function startEventsConsumer(
  sql: Sql,
  nc: NatsConnection,
  ns: string,
  log: Logger,
): Promise<BatchConsumer> {
  const s = streams(ns);
  const durable = "webhooks-deliveries";
  await ensureConsumer(nc, s.events.name, durable, s.events.subjects[0]);
  return consumeBatches(nc, s.events.name, durable, log, async (msgs) => {
    const rows = [];
    for (const m of msgs) {
      let e: Event;
      try {
        e = fromBinary(EventSchema, m.data);
      } catch {
        log.warn("dropping an unreadable event");
        continue;
      }
      if (!PARTNER_EVENTS.has(e.type) || !e.partnerId) continue;
      // The delivery's id (X-Webhook-Id) is the event's: the event stream (`hb webhooks listen`)
      // sends the same event under the same id, so a receiver fed by both deduplicates them.
      rows.push({
        id: e.id,
        partner_id: e.partnerId,
        event_id: e.id,
        event: e.type,
        data: eventData(e),
        occurred_at: (e.occurredAt ? timestampDate(e.occurredAt) : new Date()).toISOString(),
      });
    }
    if (rows.length === 0) return;
    await sql`
      insert into deliveries (id, partner_id, event_id, event, data)
      select r.id, r.partner_id, r.event_id, r.event, r.data
      from jsonb_to_recordset(${sql.json(rows as never)})
        as r(id uuid, partner_id uuid, event_id uuid, event text, data jsonb, occurred_at timestamptz)
      -- A URL on file when the event occurred, not merely when it is read: a consumer running
      -- late must not queue an event raised before the URL was set.
      where exists (select 1 from partner_webhooks w
        where w.partner_id = r.partner_id and w.on_file_since <= r.occurred_at)
      on conflict do nothing`;
  });
}
