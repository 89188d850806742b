import { fromBinary } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { MachineKind } from "@hb/contracts/hb/compute/v1/machines_pb";
import type { ComputeProvisioningService } from "@hb/contracts/hb/compute/v1/provisioning_pb";
import { EventSchema } from "@hb/contracts/hb/events/v1/events_pb";
import {
  type BatchConsumer,
  consumeBatches,
  type Logger,
  type NatsLink,
  type Sql,
  streams,
  type TxSql,
} from "@hb/platform";
import { orderEvent, serviceEvent } from "./events.ts";
import { type OrderRow, selectServices } from "./records.ts";
import { transact } from "./shared.ts";

/** The machine compute builds for a service of each product kind. */
const MACHINE_KINDS: Record<string, MachineKind> = {
  vps: MachineKind.VPS,
  dedicated: MachineKind.DEDICATED,
  game: MachineKind.GAME,
};

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
                kind: MACHINE_KINDS[r.kind] ?? MachineKind.UNSPECIFIED,
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
            await sql`update services set status = 'installing' where id = any(${started}::uuid[]) and status = 'pending'`;
            for (const id of started) failing.delete(id);
          }
          tookAll = started.length === rows.length;
        }
        // A full pass that compute took whole leaves more waiting: the next one starts at once.
        if (rows.length === PROVISION_BATCH && tookAll) continue;
      } catch (err) {
        log.warn("provisioning pass failed, will retry", { err });
      }
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
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
      for (const m of msgs) {
        const event = fromBinary(EventSchema, m.data);
        if (event.payload.case !== "machine") continue;
        const machine = event.payload.value;
        await transact(sql, async (tx) => {
          const fresh =
            await tx`insert into processed_events (event_id) values (${event.id}) on conflict do nothing returning event_id`;
          if (fresh.length === 0) return; // already applied
          const [svc] = await selectServices(tx, "s.id = $1 for update of s", [machine.serviceId]);
          if (!svc || !["installing", "pending"].includes(svc.status)) return;
          const status = machine.success ? "active" : "provisioning_failed";
          await tx`update services set status = ${status}, server_ip = ${machine.serverIp},
          hostname = coalesce(nullif(${machine.hostname}, ''), hostname),
          failure_reason = ${machine.success ? null : machine.error || "provisioning failed"} where id = ${svc.id}`;
          const [updated] = await selectServices(tx, "s.id = $1", [svc.id]);
          const [order] = svc.order_id
            ? await tx<OrderRow[]>`select * from orders where id = ${svc.order_id}`
            : [];
          await serviceEvent(
            tx,
            ns,
            machine.success ? "service.provisioned" : "service.provisioning_failed",
            updated,
            order,
            machine.success ? "" : machine.error,
          );
          if (order?.partner_id && machine.success) await partnerOrderPaidWhenBuilt(tx, ns, order);
        });
      }
    },
  );
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
  await tx`update orders set paid_event_at = clock_timestamp() where id = ${o.id}`;
  await orderEvent(tx, ns, "order.paid", o, { invoiceId: invoice?.id });
}
