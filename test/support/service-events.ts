/**
 * A partner's service events published straight to a stack's event stream, as billing's outbox
 * relay publishes them (deduplicated on their ids), and a receiver that records their deliveries:
 * for the webhook tests that need many events fast.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
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

/**
 * A partner's webhook endpoint on 127.0.0.1 that records, per service, the X-Webhook-Ids its
 * service events arrived under (`seen`), and every arrival's id in order (`received`).
 */
export function serviceEventReceiver() {
  const seen = new Map<string, Set<string>>();
  const received: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { data: { serviceId?: string } };
      const id = body.data.serviceId ?? "";
      const webhookId = req.headers["x-webhook-id"] as string;
      seen.set(id, (seen.get(id) ?? new Set()).add(webhookId));
      received.push(webhookId);
      res.writeHead(200).end();
    });
  });
  return {
    seen,
    received,
    listen: () => new Promise<void>((r) => server.listen(0, "127.0.0.1", r)),
    port: () => (server.address() as AddressInfo).port,
    close: () => server.close(),
  };
}
