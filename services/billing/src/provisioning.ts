import { fromBinary } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { type MachineKind, MachineKindSchema } from "@hb/contracts/hb/compute/v1/machines_pb";
import type { ComputeProvisioningService } from "@hb/contracts/hb/compute/v1/provisioning_pb";
import { EventSchema } from "@hb/contracts/hb/events/v1/events_pb";
import {
  type BatchConsumer,
  consumeBatches,
  enumOfWord,
  isUuid,
  type Logger,
  type NatsLink,
  type Sql,
  streams,
  type TxSql,
  wakeablePause,
  wakeOnNotify,
} from "@hb/platform";
import { clock } from "./clock.ts";
import { orderEvent, serviceEvent } from "./events.ts";
import { type OrderRow, selectServices } from "./records.ts";
import { recordServices } from "./service-records.ts";
import { transact } from "./shared.ts";

const PROVISIONING_CHANNEL = "billing_provisioning";

/** Tells the provisioner that services wait in `pending`: in a transaction, once it commits. */
export function wakeProvisioner(sql: Sql | TxSql) {
  return sql`select pg_notify(${PROVISIONING_CHANNEL}, '')`;
}

/** Services asked for in one ProvisionBatch call. */
const PROVISION_BATCH = 20;

/** Delay before asking compute again after `failures` failed attempts: doubling, capped. */
export function provisionRetryDelay(failures: number, baseMs: number, capMs = 60_000): number {
  return Math.min(capMs, baseMs * 2 ** Math.min(Math.max(failures - 1, 0), 20));
}

/**
 * Paid services wait in `pending`; each pass asks compute to build up to PROVISION_BATCH of them in one call
 * (ProvisionBatch is idempotent on each service id, so a crash between the call and the update
 * only repeats it) and moves those compute took to `installing`. Nothing is provisioned before
 * payment: only `pending` is picked. A service compute refuses is retried with back-off and never
 * holds up the rest of the batch.
 */
export function startProvisioner(
  sql: Sql,
  ns: string,
  compute: Client<typeof ComputeProvisioningService>,
  log: Logger,
  intervalMs = 300,
) {
  let stopped = false;
  const failing = new Map<string, { failures: number; retryAt: number }>();
  const failed = (serviceId: string, err: unknown) => {
    const failures = (failing.get(serviceId)?.failures ?? 0) + 1;
    const delay = provisionRetryDelay(failures, intervalMs);
    failing.set(serviceId, { failures, retryAt: Date.now() + delay });
    log.warn("provisioning request failed, will retry", { serviceId, failures, delayMs: delay, err });
  };
  // Paying an order notifies (wakeProvisioner, delivered when its transaction commits): its
  // services go to compute at once rather than at the next pass.
  const idle = wakeablePause();
  const listener = wakeOnNotify(sql, PROVISIONING_CHANNEL, idle.wake, log);
  const loop = (async () => {
    while (!stopped) {
      try {
        const waiting = [...failing.entries()].filter(([, f]) => f.retryAt > Date.now()).map(([id]) => id);
        const rows = await sql<
          {
            id: string;
            customer_id: string;
            kind: string;
            product_id: string;
            hostname: string;
            os_image_id: string;
            vcpus: number;
            memory_mb: number;
            disk_gb: number;
            location: string;
          }[]
        >`
          select s.id, s.customer_id, s.kind, s.product_id, s.hostname, s.os_image_id, p.vcpus, p.memory_mb, p.disk_gb, p.location
          from services s join products p on p.id = s.product_id
          where s.status = 'pending' and s.id <> all(${waiting}::uuid[]) order by s.created_at limit ${PROVISION_BATCH}`;
        let tookAll = false;
        if (rows.length > 0) {
          // One call for the pass's services (compute records them in one transaction).
          let results: { serviceId: string; error: string }[];
          try {
            ({ results } = await compute.provisionBatch({
              requests: rows.map((r) => ({
                serviceId: r.id,
                customerId: r.customer_id,
                // The machine kind of the product kind's word (vps ↔ MACHINE_KIND_VPS); UNSPECIFIED for none.
                kind: enumOfWord<MachineKind>(MachineKindSchema, r.kind),
                productId: r.product_id,
                hostname: r.hostname,
                osImageId: r.os_image_id,
                location: r.location,
                vcpus: r.vcpus,
                memoryMb: r.memory_mb,
                diskGb: r.disk_gb,
                plan: r.product_id,
              })),
            }));
          } catch (err) {
            for (const r of rows) failed(r.id, err);
            results = [];
          }
          const started = results.filter((r) => !r.error).map((r) => r.serviceId);
          for (const r of results) if (r.error) failed(r.serviceId, r.error);
          if (started.length > 0) {
            await sql.begin(async (tx) => {
              const moved = await tx<{ id: string }[]>`
                update services set status = 'installing' where id = any(${started}::uuid[]) and status = 'pending'
                returning id`;
              await recordServices(
                tx,
                ns,
                moved.map((r) => r.id),
              );
            });
            for (const id of started) failing.delete(id);
          }
          tookAll = started.length === rows.length;
        }
        // A full pass that compute took whole leaves more waiting: the next one starts at once.
        if (rows.length === PROVISION_BATCH && tookAll) continue;
      } catch (err) {
        log.warn("provisioning pass failed, will retry", { err });
      }
      await idle.pause(intervalMs);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      idle.wake();
      await loop;
      await listener.stop();
    },
  };
}

/** Follows compute's reports: installing → active or provisioning_failed, with the service event. */
export function startMachineEventConsumer(sql: Sql, nats: NatsLink, ns: string, log: Logger): BatchConsumer {
  const s = streams(ns);
  const durable = "billing-machine-events";
  return consumeBatches(
    nats,
    { stream: s.events.name, durable, filterSubject: `${ns}.events.machine.>` },
    log,
    async (msgs) => {
      const events: MachineReport[] = [];
      for (const m of msgs) {
        const report = machineReport(m.data);
        if (report) events.push(report);
        // Redelivered, it would fail its batch for ever and hold every later report behind it.
        else log.warn("machine event dropped: malformed", { subject: m.subject, seq: m.seq });
      }
      await applyMachineEvents(sql, ns, events);
    },
  );
}

/** A build's outcome as compute reported it (a machine event). */
export interface MachineReport {
  eventId: string;
  serviceId: string;
  success: boolean;
  serverIp: string;
  hostname: string;
  error: string;
}

/** The report a machine event carries, or undefined when it is not one billing can apply. */
export function machineReport(data: Uint8Array): MachineReport | undefined {
  let event: ReturnType<typeof fromBinary<typeof EventSchema>>;
  try {
    event = fromBinary(EventSchema, data);
  } catch {
    return undefined;
  }
  if (event.payload.case !== "machine") return undefined;
  const m = event.payload.value;
  if (!isUuid(event.id) || !isUuid(m.serviceId)) return undefined;
  const { serverIp, hostname, error, success } = m;
  return { eventId: event.id, serviceId: m.serviceId, success, serverIp, hostname, error };
}

/**
 * Applies a batch of build reports in one transaction, with the same outcome as applying them
 * one at a time in order: each event once (processed_events), a service only while it is
 * installing or pending, one service event per service changed, in the reports' order, and
 * order.paid for a partner order once its last service is active. A service reported twice in
 * the batch is applied in a later round, after its first report. Each round is a fixed number of
 * round trips, however many reports it holds (issue 13: it was ten round trips per report).
 */
export async function applyMachineEvents(sql: Sql, ns: string, events: MachineReport[]): Promise<void> {
  if (events.length === 0) return;
  const rounds: MachineReport[][] = [];
  const roundOf = new Map<string, number>();
  // An event repeated in the batch (redelivered) counts once, as processed_events makes it across batches.
  const seen = new Set<string>();
  for (const e of events) {
    if (seen.has(e.eventId)) continue;
    seen.add(e.eventId);
    const r = roundOf.get(e.serviceId) ?? 0;
    roundOf.set(e.serviceId, r + 1);
    if (r === rounds.length) rounds.push([]);
    rounds[r].push(e);
  }
  await transact(sql, async (tx) => {
    for (const round of rounds) await applyRound(tx, ns, round);
  });
}

async function applyRound(tx: TxSql, ns: string, round: MachineReport[]) {
  // The event is recorded and the service moved in one statement: the update re-checks the
  // status on the row's latest version, as a row lock followed by the check did. (The outcomes go
  // as text: postgres.js sends an array of booleans as one boolean.)
  const changed = await tx<{ id: string; event_id: string }[]>`
    with fresh as (
      insert into processed_events (event_id) select unnest(${round.map((e) => e.eventId)}::uuid[])
      on conflict do nothing returning event_id
    ), report as (
      select * from unnest(
        ${round.map((e) => e.eventId)}::uuid[], ${round.map((e) => e.serviceId)}::uuid[],
        ${round.map((e) => String(e.success))}::text[]::bool[], ${round.map((e) => e.serverIp)}::text[],
        ${round.map((e) => e.hostname)}::text[], ${round.map((e) => e.error)}::text[]
      ) as r(event_id, service_id, success, server_ip, hostname, error)
      where r.event_id in (select event_id from fresh)
    )
    update services s set
      status = case when r.success then 'active' else 'provisioning_failed' end,
      server_ip = r.server_ip,
      hostname = coalesce(nullif(r.hostname, ''), s.hostname),
      failure_reason = case when r.success then null else coalesce(nullif(r.error, ''), 'provisioning failed') end
    from report r
    where s.id = r.service_id and s.status in ('installing', 'pending')
    returning s.id, r.event_id`;
  if (changed.length === 0) return;
  const ids = changed.map((c) => c.id);
  // Sent together (postgres.js pipelines the queries one tick starts on the transaction's connection).
  const [orders, services] = await Promise.all([
    tx<
      OrderRow[]
    >`select * from orders where id in (select order_id from services where id = any(${ids}::uuid[]))`.execute(),
    selectServices(tx, "s.id = any($1::uuid[])", [ids]).execute(),
  ]);
  const serviceById = new Map(services.map((r) => [r.id, r]));
  const orderById = new Map(orders.map((o) => [o.id, o]));
  const applied = new Set(changed.map((c) => c.event_id));
  const outcomes = round
    .filter((e) => applied.has(e.eventId))
    .map((e) => {
      const updated = serviceById.get(e.serviceId)!;
      return { e, updated, order: updated.order_id ? orderById.get(updated.order_id) : undefined };
    });
  // Sent together, in the reports' order (postgres.js pipelines what one tick starts).
  await Promise.all(
    outcomes.map(({ e, updated, order }) =>
      serviceEvent(
        tx,
        ns,
        e.success ? "service.provisioned" : "service.provisioning_failed",
        updated,
        order,
        e.success ? "" : e.error,
      ),
    ),
  );
  const built = new Set<string>();
  for (const { e, order } of outcomes) {
    if (!order?.partner_id || !e.success || built.has(order.id)) continue;
    built.add(order.id);
    await partnerOrderPaidWhenBuilt(tx, ns, order);
  }
}

/** order.paid for a partner order: once, when it is paid and every service is active. */
async function partnerOrderPaidWhenBuilt(tx: TxSql, ns: string, order: OrderRow) {
  const [o] = await tx<
    (OrderRow & { paid_event_at: Date | null })[]
  >`select * from orders where id = ${order.id} for update`;
  if (o.paid_event_at || o.payment_status !== "paid") return;
  const [{ waiting }] = await tx<{ waiting: number }[]>`
    select count(*)::int as waiting from services where order_id = ${o.id} and status <> 'active'`;
  if (waiting > 0) return;
  const [invoice] = await tx<{ id: string }[]>`
    select id from documents where order_id = ${o.id} and kind = 'invoice' and status = 'paid' order by created_at desc limit 1`;
  await tx`update orders set paid_event_at = ${clock.now()} where id = ${o.id}`;
  await orderEvent(tx, ns, "order.paid", o, { invoiceId: invoice?.id });
}
