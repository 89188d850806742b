import { fromBinary } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { type MachineKind, MachineKindSchema } from "@hb/contracts/hb/compute/v1/machines_pb";
import type { ComputeProvisioningService } from "@hb/contracts/hb/compute/v1/provisioning_pb";
import { type Event, EventSchema } from "@hb/contracts/hb/events/v1/events_pb";
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
import { orderEvent, serviceEvents } from "./events.ts";
import { type OrderRow, type ServiceRow, selectServices } from "./records.ts";
import { recordRowsAtCommit } from "./service-records.ts";
import { transact, transactPipelined } from "./shared.ts";

const PROVISIONING_CHANNEL = "billing_provisioning";

/** Tells the provisioner that services wait in `pending`: in a transaction, once it commits. */
export function wakeProvisioner(sql: Sql | TxSql) {
  return sql`select pg_notify(${PROVISIONING_CHANNEL}, '')`;
}

/** Transactions whose call hands its paid services to compute itself (provisioningHandOver). */
const handedOver = new WeakSet<TxSql>();

export function handsOverItself(tx: TxSql): void {
  handedOver.add(tx);
}

/**
 * wakeProvisioner, started, unless the transaction's call hands its services over itself (the
 * provisioner would find them claimed: a pass for nothing).
 */
export function wakeProvisionerUnlessHandedOver(tx: TxSql): Promise<unknown> {
  return handedOver.has(tx) ? Promise.resolve() : wakeProvisioner(tx).execute();
}

/** Services asked for in one ProvisionBatch call. */
const PROVISION_BATCH = 20;
/** ProvisionBatch's own limit (provisioning.proto): a hand-over flush takes at most this many. */
const HAND_OVER_MAX = 100;

/** What compute needs to build one paid service (a `pending` service joined with its product). */
export interface ProvisionItem {
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
}

const provisionRequest = (r: ProvisionItem) => ({
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
});

type Compute = Pick<Client<typeof ComputeProvisioningService>, "provisionBatch" | "applyServiceRecords">;

/**
 * An order call's own hand-over to compute (issue 31 §2): the service records it committed and the
 * builds of the services it paid go in one ProvisionBatch call before it answers, instead of
 * ApplyServiceRecords before the answer and ProvisionBatch from the provisioner's next pass. Calls
 * that arrive while one is in flight go together in the next (one call for several orders under
 * load). The provisioner leaves services claimed here alone; whatever a hand-over does not get
 * compute to take (a failed call, a refusal) stays `pending` and the provisioner's passes take it
 * as before, so a 201 never depends on this call.
 */
export interface ProvisioningHandOver {
  /** Before commit: the call hands these services over itself; the provisioner leaves them. */
  claim(serviceIds: readonly string[]): void;
  /** The transaction that claimed them did not commit. */
  release(serviceIds: readonly string[]): void;
  /**
   * After commit: the records and the builds, in one call shared with the calls waiting beside it;
   * resolves once compute answered it (or it failed, logged: the stream brings the records and the
   * provisioner the builds). The services compute took move to `installing` afterwards, in one
   * transaction per call, as the provisioner moves its own.
   */
  send(records: readonly Event[], services: readonly ProvisionItem[]): Promise<void>;
  /** Waits for the moves to `installing` under way. */
  settled(): Promise<void>;
}

interface ProvisioningState {
  failing: Map<string, { failures: number; retryAt: number }>;
  claimed: Set<string>;
}

/**
 * Moves the services compute took to `installing` and writes their records, in one transaction:
 * the update returns the rows the records are made of (no read of its own), and the records go with
 * the commit.
 */
async function markInstalling(sql: Sql, ns: string, started: readonly string[]) {
  if (started.length === 0) return;
  await transactPipelined(sql, async (tx, withCommit) => {
    const moved = await tx<ServiceRow[]>`
      update services s set status = 'installing' from products p
      where s.id = any(${started}::uuid[]) and s.status = 'pending' and p.id = s.product_id
      returning s.*, p.name as product_name`;
    withCommit(recordRowsAtCommit(tx, ns, moved)());
  });
}

export function provisioningHandOver(
  sql: Sql,
  ns: string,
  compute: Compute,
  log: Logger,
  intervalMs = 300,
): ProvisioningHandOver & { state: ProvisioningState } {
  const state: ProvisioningState = { failing: new Map(), claimed: new Set() };
  type Waiting = { records: readonly Event[]; services: readonly ProvisionItem[]; done: () => void };
  let queue: Waiting[] = [];
  let flushing = false;
  let moves: Promise<void> = Promise.resolve();
  const release = (ids: readonly string[]) => {
    for (const id of ids) state.claimed.delete(id);
  };
  const failed = (serviceId: string, err: unknown) => {
    const failures = (state.failing.get(serviceId)?.failures ?? 0) + 1;
    const delay = provisionRetryDelay(failures, intervalMs);
    state.failing.set(serviceId, { failures, retryAt: Date.now() + delay });
    log.warn("provisioning request failed, will retry", { serviceId, failures, delayMs: delay, err });
  };

  async function flushOnce(batch: Waiting[]) {
    const records = batch.flatMap((w) => w.records);
    const services = batch.flatMap((w) => w.services);
    try {
      if (services.length === 0) {
        await compute.applyServiceRecords({ events: records });
        return;
      }
      const { results } = await compute.provisionBatch({ requests: services.map(provisionRequest), records });
      const started = results.filter((r) => !r.error).map((r) => r.serviceId);
      for (const r of results) if (r.error) failed(r.serviceId, r.error);
      for (const id of started) state.failing.delete(id);
      const refused = new Set(services.map((s) => s.id));
      for (const id of started) refused.delete(id);
      release([...refused]);
      // Not waited for by the orders (compute holds the machines already), one move at a time;
      // claimed until moved, so that no provisioner pass asks for them again meanwhile.
      moves = moves.then(() =>
        markInstalling(sql, ns, started)
          .catch((err) =>
            log.warn("services built but not marked installing; the provisioner asks again", { err }),
          )
          .finally(() => release(started)),
      );
    } catch (err) {
      for (const s of services) failed(s.id, err);
      release(services.map((s) => s.id));
      log.warn("service records not handed to compute; the event stream brings them", { err });
    }
  }

  async function flush() {
    flushing = true;
    try {
      while (queue.length > 0) {
        // Whole calls only, up to ProvisionBatch's limit (the first always: an order has at most 50).
        let n = 0;
        let take = 0;
        while (take < queue.length && (take === 0 || n + queue[take].services.length <= HAND_OVER_MAX)) {
          n += queue[take].services.length;
          take++;
        }
        const batch = queue.slice(0, take);
        queue = queue.slice(take);
        try {
          await flushOnce(batch);
        } finally {
          // Whatever happened, the orders answer: the stream and the provisioner cover a failure.
          for (const w of batch) w.done();
        }
      }
    } finally {
      flushing = false;
    }
  }

  return {
    state,
    claim(ids) {
      for (const id of ids) state.claimed.add(id);
    },
    release,
    send(records, services) {
      if (records.length === 0 && services.length === 0) return Promise.resolve();
      return new Promise<void>((done) => {
        queue.push({ records, services, done });
        if (!flushing) void flush();
      });
    },
    settled: () => moves,
  };
}

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
  handOver: ProvisioningHandOver & { state: ProvisioningState } = provisioningHandOver(
    sql,
    ns,
    compute,
    log,
    intervalMs,
  ),
) {
  let stopped = false;
  const { failing, claimed } = handOver.state;
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
        const waiting = [
          ...[...failing.entries()].filter(([, f]) => f.retryAt > Date.now()).map(([id]) => id),
          // An order call is handing these over itself (provisioningHandOver).
          ...claimed,
        ];
        const read = await sql<ProvisionItem[]>`
          select s.id, s.customer_id, s.kind, s.product_id, s.hostname, s.os_image_id, p.vcpus, p.memory_mb, p.disk_gb, p.location
          from services s join products p on p.id = s.product_id
          where s.status = 'pending' and s.id <> all(${waiting}::uuid[]) order by s.created_at limit ${PROVISION_BATCH}`;
        // An order claims its services before its commit makes them visible, but this pass may have
        // listed the claims before that and read after it (its query waiting for a connection
        // meanwhile): they are the order's to hand over, and asking compute too was a second call
        // for the same build (CI: "compute ProvisionBatch": 2 for one order).
        const rows = read.filter((r) => !claimed.has(r.id));
        let tookAll = false;
        if (rows.length > 0) {
          // One call for the pass's services (compute records them in one transaction).
          let results: { serviceId: string; error: string }[];
          try {
            ({ results } = await compute.provisionBatch({ requests: rows.map(provisionRequest) }));
          } catch (err) {
            for (const r of rows) failed(r.id, err);
            results = [];
          }
          const started = results.filter((r) => !r.error).map((r) => r.serviceId);
          for (const r of results) if (r.error) failed(r.serviceId, r.error);
          if (started.length > 0) {
            await markInstalling(sql, ns, started);
            for (const id of started) failing.delete(id);
          }
          tookAll = started.length === rows.length;
        }
        // A full pass that compute took whole leaves more waiting: the next one starts at once.
        if (read.length === PROVISION_BATCH && tookAll) continue;
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
      await handOver.settled();
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
  // One statement, in the reports' order.
  await serviceEvents(
    tx,
    ns,
    outcomes.map(({ e, updated, order }) => ({
      type: e.success ? "service.provisioned" : "service.provisioning_failed",
      s: updated,
      order,
      reason: e.success ? "" : e.error,
    })),
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
