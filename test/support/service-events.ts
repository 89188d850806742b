/**
 * A partner's service event published straight to a stack's event stream, as billing's outbox
 * relay publishes it (deduplicated on its id): for the webhook tests that need many events fast.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { EventSchema } from "@hb/contracts/hb/events/v1/events_pb";
import { newId } from "@hb/platform";
import type { JetStreamClient } from "@nats-io/jetstream";

export interface ServiceEventOptions {
  type?: "service.suspended" | "service.unsuspended";
  serviceId?: string;
  hostname?: string;
}

/** Publishes one event under the namespace `ns`; resolves to the event's id. */
export async function publishServiceEvent(
  js: JetStreamClient,
  ns: string,
  partnerId: string,
  { type = "service.suspended", serviceId = newId(), hostname = "h" }: ServiceEventOptions = {},
): Promise<string> {
  const status = type === "service.suspended" ? ServiceStatus.SUSPENDED : ServiceStatus.ACTIVE;
  const event = create(EventSchema, {
    id: newId(),
    type,
    occurredAt: timestampNow(),
    partnerId,
    payload: { case: "service", value: { serviceId, status, hostname } },
  });
  await js.publish(`${ns}.events.${type}`, toBinary(EventSchema, event), { msgID: event.id });
  return event.id;
}
