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
  beginContext,
  consumeBatches,
  endContext,
  enumWord,
  type Logger,
  type NatsConnection,
  type NatsLink,
  REQUEST_ID_HEADER,
  runInContext,
  SpanKind,
  type Sql,
  streams,
  TRACEPARENT_HEADER,
  traceparentOf,
} from "@hb/platform";
import { type JetStreamManager, jetstreamManager } from "@nats-io/jetstream";

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

const DURABLE = "webhooks-deliveries";

/**
 * The stream position up to which every event has been stored as a delivery (the durable
 * consumer's ack floor: a batch is acked only after its insert commits), or undefined while NATS
 * or the consumer is not there. Replicas store batches side by side, so a delivery past it may
 * have an earlier event still on its way into the table.
 */
export function storedThrough(nats: NatsLink, ns: string): () => Promise<number | undefined> {
  // One manager per connection, made without the account check jetstreamManager() makes by
  // default: that check is a request of its own ($JS.API.INFO, which sums every stream of the
  // account), and the floor is read for each batch stored.
  let held: { nc: NatsConnection; jsm: JetStreamManager } | undefined;
  return async () => {
    const nc = nats.current;
    if (!nc) return undefined;
    try {
      if (held?.nc !== nc) held = { nc, jsm: await jetstreamManager(nc, { checkAPI: false }) };
      const jsm = held.jsm;
      const info = await jsm.consumers.info(streams(ns).events.name, DURABLE);
      return info.ack_floor.stream_seq;
    } catch {
      return undefined;
    }
  };
}

/**
 * Turns partner events into pending deliveries. Idempotent (the delivery's id is the event's),
 * acked only after commit. An event raised while the partner has no URL on file is dropped.
 * `stored` is told the batch's last stream position once it is acked, so deliveries are
 * claimed as they arrive instead of at the next pass.
 */
export function startEventsConsumer(
  sql: Sql,
  nats: NatsLink,
  ns: string,
  log: Logger,
  stored: (seq: number, partners: Iterable<string>) => void = () => {},
): BatchConsumer {
  const s = streams(ns);
  return consumeBatches(
    nats,
    { stream: s.events.name, durable: DURABLE, filterSubject: s.events.subjects[0] },
    log,
    async (msgs) => {
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
        // The delivery keeps the raising request's ids (NATS headers) under a span of its own.
        const ctx = beginContext("event consume", SpanKind.CONSUMER, {
          requestId: m.headers?.get(REQUEST_ID_HEADER),
          traceparent: m.headers?.get(TRACEPARENT_HEADER),
        });
        runInContext(ctx, () => log.debug("event received", { event: e.type, eventId: e.id }));
        // The delivery's id (X-Webhook-Id) is the event's: the event stream (`hb webhooks listen`)
        // sends the same event under the same id, so a receiver fed by both deduplicates them.
        rows.push({
          id: e.id,
          partner_id: e.partnerId,
          event_id: e.id,
          event: e.type,
          data: eventData(e),
          occurred_at: (e.occurredAt ? timestampDate(e.occurredAt) : new Date()).toISOString(),
          request_id: ctx.requestId,
          traceparent: traceparentOf(ctx),
          stream_seq: m.seq,
        });
        endContext(ctx);
      }
      if (rows.length === 0) return;
      await sql`
      with stored as (
      insert into deliveries (id, partner_id, event_id, event, data, request_id, traceparent, created_at, stream_seq)
      -- Created when the event occurred, not when this replica read it (retention and the URL rule
      -- read it); the queue's order is the stream's (stream_seq), whichever replica stored first.
      select r.id, r.partner_id, r.event_id, r.event, r.data, r.request_id, r.traceparent, r.occurred_at,
             r.stream_seq
      from jsonb_to_recordset(${sql.json(rows as never)})
        as r(id uuid, partner_id uuid, event_id uuid, event text, data jsonb, occurred_at timestamptz,
             request_id text, traceparent text, stream_seq bigint)
      -- A URL on file when the event occurred, not merely when it is read: a consumer running
      -- late must not queue an event raised before the URL was set.
      where exists (select 1 from partner_webhooks w
        where w.partner_id = r.partner_id and w.on_file_since <= r.occurred_at)
      on conflict do nothing
      returning partner_id)
      -- the partner's queue, leased by whoever serves it (partner-lease.ts), made with its first delivery
      insert into partner_queues (partner_id) select distinct partner_id from stored on conflict do nothing`;
      // After this batch's acks, which consumeBatches sends once this returns: the floor a claim
      // reads then most likely covers it.
      const last = Math.max(...msgs.map((m) => m.seq));
      const partners = new Set(rows.map((r) => r.partner_id));
      setImmediate(() => stored(last, partners));
    },
  );
}
