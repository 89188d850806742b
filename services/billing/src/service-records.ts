/**
 * Billing's side of compute's copy of the service records (issue 31): every change to what a
 * service's record shows (status, product, price, cycle, next due date, cancellation, hostname)
 * writes the whole record in the change's own transaction: on the service event the change raises
 * (events.ts), else as a service.record_changed event (recordServices, recordRows).
 * Compute keeps the latest per service and answers the machine pages from it without asking
 * billing.
 *
 * Read-your-writes: the stream brings the events within milliseconds, but a customer's next
 * request can be quicker. So the events an RPC committed are also handed to compute before
 * billing answers it (withRecordHandOver); the scheduled work (renewal runs, overdue suspension,
 * provisioning reports) has no caller waiting and relies on the stream alone.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Client } from "@connectrpc/connect";
import type { ComputeProvisioningService } from "@hb/contracts/hb/compute/v1/provisioning_pb";
import type { Event } from "@hb/contracts/hb/events/v1/events_pb";
import { type EventInit, type Logger, type Sql, type TxSql, writeOutboxBatch } from "@hb/platform";
import { type ServiceRow, selectServices, summaryOut } from "./records.ts";

export const SERVICE_RECORD_EVENT = "service.record_changed";

/** The events written during the RPC being answered, to hand over once it has committed. */
const written = new AsyncLocalStorage<Event[]>();

/** The services whose record each transaction has written, so a later step does not repeat it. */
const recorded = new WeakMap<TxSql, Set<string>>();

/**
 * Notes record-carrying events a transaction wrote itself (a service event carries the record):
 * handed over with the rest, and not written again by a later recordRows in the same transaction.
 */
export function recordedAlong(tx: TxSql, events: readonly Event[], serviceIds: readonly string[]) {
  written.getStore()?.push(...events);
  const seen = recorded.get(tx) ?? new Set<string>();
  for (const id of serviceIds) seen.add(id);
  recorded.set(tx, seen);
}

/**
 * Writes the current record of each service (as this transaction sees it) as an event. Call it
 * after the change, in the same transaction.
 */
export async function recordServices(tx: TxSql, ns: string, serviceIds: readonly string[]): Promise<void> {
  if (serviceIds.length === 0) return;
  await recordRows(
    tx,
    ns,
    await selectServices(tx, "s.id = any($1::uuid[]) order by s.id", [[...new Set(serviceIds)]]),
  );
}

/**
 * recordServices for rows the transaction has just read back (after its change), leaving out
 * those it has already recorded unless `again`; `alongside` are other events of the change,
 * written in the same statement (no round trip of their own for the records).
 */
export async function recordRows(
  tx: TxSql,
  ns: string,
  rows: readonly ServiceRow[],
  { alongside = [], again = false }: { alongside?: EventInit[]; again?: boolean } = {},
): Promise<void> {
  const seen = recorded.get(tx);
  const fresh = again || !seen ? rows : rows.filter((r) => !seen.has(r.id));
  if (fresh.length === 0 && alongside.length === 0) return;
  const events = await writeOutboxBatch(tx, ns, recordEvents(alongside, fresh));
  recordedAlong(
    tx,
    events.slice(alongside.length),
    fresh.map((r) => r.id),
  );
}

/** The outbox rows for `alongside` then one service-record event per row, in that order. */
const recordEvents = (alongside: EventInit[], rows: readonly ServiceRow[]): EventInit[] => [
  ...alongside,
  ...rows.map(
    (r): EventInit => ({
      type: SERVICE_RECORD_EVENT,
      partnerId: r.partner_id ?? "",
      payload: { case: "serviceRecord", value: { service: summaryOut(r) } },
    }),
  ),
];

/**
 * recordRows in two steps: the services count as recorded at once (a later recordRows in the
 * transaction leaves them out), and the statement is sent when the function returned is called,
 * with the transaction's commit (sentWithCommit, or transactPipelined's withCommit), so that the
 * records cost no round trip of their own. The events join the call's hand-over once the
 * statement has answered (before the commit's answer).
 */
export function recordRowsAtCommit(
  tx: TxSql,
  ns: string,
  rows: readonly ServiceRow[],
  alongside: EventInit[] = [],
): () => Promise<void> {
  const seen = recorded.get(tx) ?? new Set<string>();
  const fresh = rows.filter((r) => !seen.has(r.id));
  if (fresh.length === 0 && alongside.length === 0) return () => Promise.resolve();
  for (const r of fresh) seen.add(r.id);
  recorded.set(tx, seen);
  const store = written.getStore();
  return () =>
    writeOutboxBatch(tx, ns, recordEvents(alongside, fresh)).then((events) => {
      store?.push(...events.slice(alongside.length));
    });
}

/**
 * For a handler that hands its records over itself (the order call: with its builds, in one call):
 * forgetWritten at the start of each attempt of its transaction (an attempt rolled back wrote
 * nothing that happened), takeWritten once it has committed. What it takes is not handed over
 * again by withRecordHandOver, which then has nothing to check or send.
 */
export function forgetWritten(): void {
  written.getStore()?.splice(0);
}

export function takeWritten(): Event[] {
  return written.getStore()?.splice(0) ?? [];
}

/**
 * Writes the record of every service (in id order, `batch` a transaction): compute's copy is
 * filled from scratch this way once, when it is first deployed (scripts/service-records-backfill.ts),
 * and after services were written around billing's code (the benchmark's bulk seed). Returns how
 * many were written.
 */
export async function recordEveryService(sql: Sql, ns: string, batch = 500): Promise<number> {
  let after = "00000000-0000-0000-0000-000000000000";
  let total = 0;
  for (;;) {
    const rows = await sql.begin((tx) =>
      selectServices(tx, "s.id > $1 order by s.id limit $2", [after, batch]).then(async (rows) => {
        await recordRows(tx, ns, rows, { again: true });
        return rows;
      }),
    );
    total += rows.length;
    if (rows.length < batch) return total;
    after = rows[rows.length - 1].id;
  }
}

type Compute = Pick<Client<typeof ComputeProvisioningService>, "applyServiceRecords">;

/**
 * Wraps each handler so that the service records its call committed reach compute before the
 * answer does. Only committed events are handed over (a transaction that was rolled back, or
 * retried, wrote events that never happened). A failed hand-over is logged and the answer
 * stands: the stream still brings the events.
 */
export function withRecordHandOver<H extends object>(
  handlers: H,
  sql: Sql,
  compute: Compute,
  log: Logger,
): H {
  const wrapped: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(handlers)) {
    if (typeof fn !== "function") {
      wrapped[name] = fn;
      continue;
    }
    wrapped[name] = (...args: unknown[]) => {
      const events: Event[] = [];
      return written.run(events, async () => {
        const answer = await fn(...args);
        if (events.length > 0) await handOver(sql, compute, log, events);
        return answer;
      });
    };
  }
  return wrapped as H;
}

async function handOver(sql: Sql, compute: Compute, log: Logger, events: Event[]) {
  try {
    const committed = new Set(
      (
        await sql<
          { id: string }[]
        >`select id::text from outbox where id = any(${events.map((e) => e.id)}::uuid[])`
      ).map((r) => r.id),
    );
    const mine = events.filter((e) => committed.has(e.id));
    if (mine.length > 0) await compute.applyServiceRecords({ events: mine });
  } catch (err) {
    log.warn("service records not handed to compute; the event stream brings them", { err });
  }
}
