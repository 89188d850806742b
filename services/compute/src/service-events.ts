import { fromBinary } from "@bufbuild/protobuf";
import { EventSchema } from "@hb/contracts/hb/events/v1/events_pb";
import {
  type BatchConsumer,
  consumeBatches,
  isUuid,
  type Logger,
  type NatsLink,
  type Sql,
  streams,
} from "@hb/platform";
import type { JobRow } from "./driver.ts";
import type { Jobs } from "./jobs.ts";
import type { MachineRow } from "./machines.ts";
import { applyServiceRecords } from "./service-records.ts";

const STATUS: Record<string, string> = {
  "service.suspended": "suspended",
  "service.unsuspended": "active",
  "service.terminated": "terminated",
};

/**
 * Reads billing's service events, once each, for two things: compute's copy of each service's
 * record (service-records.ts: every service event carries it, service.record_changed only it), and
 * each service's billing status, so control of a suspended service is refused without a call; a
 * suspension stops the machine and its end starts it again if it was running (suspension.ts); a
 * termination removes a real provider's machine.
 * One durable for both: two durables on the same subjects had NATS deliver, and compute ack, every
 * service event twice (three of an order's five events).
 */
export function startServiceEventConsumer(
  sql: Sql,
  nats: NatsLink,
  ns: string,
  log: Logger,
  jobs?: Pick<Jobs, "accept" | "launchAll" | "settleSuspensions">,
  /** Told each batch's status changes once committed (open consoles of a suspended service close). */
  onStatus?: (changes: { serviceId: string; status: string }[]) => void,
): BatchConsumer {
  const s = streams(ns);
  const durable = "compute-service-events";
  return consumeBatches(
    nats,
    {
      stream: s.events.name,
      durable,
      filterSubject: `${ns}.events.service.>`,
      // The durable that kept the records until 2026-12-01.
      replaces: ["compute-service-records"],
    },
    log,
    async (msgs) => {
      const decoded = msgs.map((m) => fromBinary(EventSchema, m.data));
      // The records first, on their own: an upsert that changes a row only for a newer event, so a
      // batch that fails below and comes back applies them again to no effect.
      const skipped = await applyServiceRecords(sql, decoded, "stream");
      // A malformed record would fail every retry of its batch: it is dropped, and said so.
      if (skipped > 0) log.warn("dropped service records without valid ids", { skipped });
      // One transaction per batch, not per event: a burst of service events (a reseller
      // suspending in bulk) cost four round trips each (issue 13).
      const events: { id: string; serviceId: string; status: string }[] = [];
      for (const event of decoded) {
        const status = STATUS[event.type];
        if (!status || event.payload.case !== "service") continue;
        // A malformed id would fail the batch's statements, and with them every event beside it.
        if (!isUuid(event.id) || !isUuid(event.payload.value.serviceId)) {
          log.warn("dropping a service event without valid ids", { event: event.type });
          continue;
        }
        events.push({ id: event.id, serviceId: event.payload.value.serviceId, status });
      }
      if (events.length === 0) return;
      const toLaunch = await sql.begin(async (tx) => {
        const fresh = new Set(
          (
            await tx<{ event_id: string }[]>`insert into processed_events (event_id)
              select unnest(${events.map((e) => e.id)}::uuid[]) on conflict do nothing returning event_id`
          ).map((r) => r.event_id),
        );
        // Applied in stream order: a service's last event sets its status, and a termination
        // anywhere in the batch stops its machine, as one statement per event did.
        const last = new Map<string, { status: string; terminated: boolean }>();
        for (const e of events) {
          if (!fresh.has(e.id)) continue;
          const terminated = (last.get(e.serviceId)?.terminated ?? false) || e.status === "terminated";
          last.set(e.serviceId, { status: e.status, terminated });
        }
        if (last.size === 0) return [];
        const ids = [...last.keys()];
        // A real provider's machine of a terminated service is removed by a job (the simulator's
        // has nothing to remove): its container and snapshots are deleted after the service ends.
        const ended = ids.filter((id) => last.get(id)?.terminated);
        const removable =
          jobs && ended.length > 0
            ? await tx<Pick<MachineRow, "service_id" | "customer_id" | "provider">[]>`
                select service_id, customer_id, provider from machines
                where service_id = any(${ended}::uuid[]) and provider <> 'simulator' and has_instance`
            : [];
        await tx`update machines m set service_status = v.status,
            state = case when v.terminated then 'stopped' else m.state end,
            has_instance = case when v.terminated then false else m.has_instance end
          from unnest(${ids}::uuid[], ${ids.map((id) => last.get(id)!.status)}::text[],
                      ${ids.map((id) => String(last.get(id)!.terminated))}::text[]::bool[])
            as v(service_id, status, terminated)
          where m.service_id = v.service_id`;
        // Its snapshots and backups end with it (the terminate job removes them at the provider):
        // none reads available after the service is gone.
        if (ended.length > 0)
          await tx`update copies set status = 'deleted'
            where service_id = any(${ended}::uuid[]) and status <> 'deleted'`;
        const accepted: JobRow[] = [];
        for (const m of removable) {
          const job = await jobs?.accept(tx, m, "terminate", "stopped");
          if (job) accepted.push(job);
        }
        const changed = ids.filter((id) => !last.get(id)?.terminated);
        if (jobs) accepted.push(...(await jobs.settleSuspensions(tx, changed)));
        return accepted;
      });
      onStatus?.(events);
      // Handed to the driver once committed, as every accepted job is; the loop carries them on.
      await jobs?.launchAll(toLaunch);
    },
  );
}
