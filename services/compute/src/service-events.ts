import { fromBinary } from "@bufbuild/protobuf";
import { EventSchema } from "@hb/contracts/hb/events/v1/events_pb";
import {
  type BatchConsumer,
  consumeBatches,
  type Logger,
  type NatsLink,
  type Sql,
  streams,
} from "@hb/platform";

const STATUS: Record<string, string> = {
  "service.suspended": "suspended",
  "service.unsuspended": "active",
  "service.terminated": "terminated",
};

/** Keeps compute's copy of each service's billing status, so control of a suspended service is refused without a call. */
export function startServiceEventConsumer(sql: Sql, nats: NatsLink, ns: string, log: Logger): BatchConsumer {
  const s = streams(ns);
  const durable = "compute-service-events";
  return consumeBatches(
    nats,
    { stream: s.events.name, durable, filterSubject: `${ns}.events.service.>` },
    log,
    async (msgs) => {
      for (const m of msgs) {
        const event = fromBinary(EventSchema, m.data);
        const status = STATUS[event.type];
        if (!status || event.payload.case !== "service") continue;
        const serviceId = event.payload.value.serviceId;
        await sql.begin(async (tx) => {
          const fresh =
            await tx`insert into processed_events (event_id) values (${event.id}) on conflict do nothing returning event_id`;
          if (fresh.length === 0) return;
          await tx`update machines set service_status = ${status} where service_id = ${serviceId}`;
          if (status === "terminated")
            await tx`update machines set state = 'stopped', has_instance = false where service_id = ${serviceId}`;
        });
      }
    },
  );
}
