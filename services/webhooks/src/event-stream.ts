import type { MessageInitShape } from "@bufbuild/protobuf";
import { fromBinary } from "@bufbuild/protobuf";
import type { Client, HandlerContext } from "@connectrpc/connect";
import type { PartnerLookupService } from "@hb/contracts/hb/auth/v1/partner_lookup_pb";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { type Event, EventSchema } from "@hb/contracts/hb/events/v1/events_pb";
import type {
  StreamEventsRequest,
  StreamEventsResponseSchema,
} from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { apiError, badRequest, isUuid, type NatsLink, streams } from "@hb/platform";
import { DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { deliveryMessage } from "./delivery-message.ts";
import { eventData, PARTNER_EVENTS } from "./events-consumer.ts";

type StreamItem = MessageInitShape<typeof StreamEventsResponseSchema>;

export interface EventStreamDeps {
  nats: NatsLink;
  ns: string;
  auth: Client<typeof PartnerLookupService>;
  /** Streams one partner may hold open at once (on this replica). */
  perPartner: number;
}

/**
 * `StreamEvents`: a partner's events as they happen, each built exactly as its delivery would be
 * (`deliveryMessage`) and signed with the partner's secret of that moment, so a rotation applies
 * to the next event. It reads the events stream with its own ordered consumer starting after the
 * stream's last message at the time of the call, so the `opened` message guarantees that every
 * event published after it is seen. Deliveries are untouched: this is a second reader of the same
 * stream, not a consumer of the delivery queue.
 */
export function createEventStream(deps: EventStreamDeps) {
  const open = new Map<string, number>();
  const s = streams(deps.ns);

  return async function* streamEvents(
    req: StreamEventsRequest,
    ctx: HandlerContext,
  ): AsyncGenerator<StreamItem> {
    const partnerId = req.partnerId;
    if (!isUuid(partnerId)) throw badRequest("partner_id", "partner_id is not a valid identifier");
    const already = open.get(partnerId) ?? 0;
    if (already >= deps.perPartner) {
      throw apiError(
        "CONFLICT",
        `At most ${deps.perPartner} event streams may be open at once for a partner; close one first`,
      );
    }
    // Without NATS the stream could not promise to show every later event: the caller is told to
    // come back (hb webhooks listen reconnects), rather than be handed a stream that stays silent.
    const nc = deps.nats.current;
    if (!nc || !deps.nats.connected()) {
      throw apiError("SERVICE_UNAVAILABLE", "The event stream is unavailable for a moment; try again");
    }
    open.set(partnerId, already + 1);
    try {
      const jsm = await jetstreamManager(nc);
      const { state } = await jsm.streams.info(s.events.name);
      // The stream holds only events (`<ns>.events.>`), so no subject filter is needed.
      const consumer = await jetstream(nc).consumers.get(s.events.name, {
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: state.last_seq + 1,
      });
      const messages = await consumer.consume({ max_messages: 100 });
      const stop = () => messages.stop();
      ctx.signal.addEventListener("abort", stop, { once: true });
      try {
        yield { item: { case: "opened", value: { openStreams: open.get(partnerId) ?? 1 } } };
        for await (const m of messages) {
          let e: Event;
          try {
            e = fromBinary(EventSchema, m.data);
          } catch {
            continue;
          }
          if (e.partnerId !== partnerId || !PARTNER_EVENTS.has(e.type)) continue;
          const [partner] = (await deps.auth.getPartnerForDelivery({ customerIds: [partnerId] })).partners;
          // As for deliveries: nothing goes out while the profile is not active or has no secret.
          if (partner?.status !== PartnerStatus.ACTIVE || !partner.signingSecret) continue;
          const message = deliveryMessage(
            { id: e.id, event: e.type, data: eventData(e) },
            partner.signingSecret,
          );
          yield { item: { case: "delivery", value: { id: e.id, event: e.type, ...message } } };
        }
      } finally {
        ctx.signal.removeEventListener("abort", stop);
        stop();
      }
    } finally {
      const left = (open.get(partnerId) ?? 1) - 1;
      if (left > 0) open.set(partnerId, left);
      else open.delete(partnerId);
    }
  };
}
