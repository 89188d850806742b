import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { type Event, EventSchema } from "@hb/contracts/hb/events/v1/events_pb";
import { headers } from "@nats-io/transport-node";
import { type Sql, type TxSql, wakeOnNotify } from "./db.ts";
import { newId } from "./ids.ts";
import type { Logger } from "./log.ts";
import { Gauge, Histogram, metricsRegistry } from "./metrics.ts";
import { jetstream, type NatsLink, streams } from "./nats.ts";
import {
  currentContext,
  REQUEST_ID_HEADER,
  runInContext,
  TRACEPARENT_HEADER,
  traceparentOf,
} from "./request-context.ts";
import { beginContext, endContext, SpanKind } from "./tracing.ts";
import { wakeablePause } from "./wakeable-pause.ts";

export type EventInit = Omit<MessageInitShape<typeof EventSchema>, "id" | "occurredAt" | "$typeName">;

/**
 * Records an event in the same transaction as the change it describes. The relay publishes it
 * after commit; a crash in between only delays it.
 */
export async function writeOutbox(tx: TxSql, ns: string, init: EventInit): Promise<string> {
  const id = newId();
  const event = create(EventSchema, { ...init, id, occurredAt: timestampNow() });
  const subject = streams(ns).eventSubject(event.type);
  // The request it was raised in travels with the event (NATS headers, written by the relay).
  const ctx = currentContext();
  const requestId = ctx?.requestId ?? null;
  const traceparent = ctx ? traceparentOf(ctx) : null;
  // One round trip: the notification (delivered at commit) rides on the insert.
  await tx`with queued as (
      insert into outbox (id, subject, payload, request_id, traceparent)
      values (${id}, ${subject}, ${Buffer.from(toBinary(EventSchema, event))}, ${requestId}, ${traceparent})
      returning id)
    select pg_notify('outbox', '') from queued`;
  return id;
}

/**
 * writeOutbox for several events in one round trip (a change to many rows at once); returns the
 * events as written, for a caller that also hands them on directly.
 */
export async function writeOutboxBatch(tx: TxSql, ns: string, inits: EventInit[]): Promise<Event[]> {
  if (inits.length === 0) return [];
  const events = inits.map((init) =>
    create(EventSchema, { ...init, id: newId(), occurredAt: timestampNow() }),
  );
  const ctx = currentContext();
  const requestId = ctx?.requestId ?? null;
  const traceparent = ctx ? traceparentOf(ctx) : null;
  await tx`with queued as (
      insert into outbox (id, subject, payload, request_id, traceparent)
      select e.id, e.subject, decode(e.payload, 'hex'), ${requestId}, ${traceparent}
      from unnest(${events.map((e) => e.id)}::uuid[], ${events.map((e) => streams(ns).eventSubject(e.type))}::text[],
                  ${events.map((e) => Buffer.from(toBinary(EventSchema, e)).toString("hex"))}::text[]) as e(id, subject, payload)
      returning id)
    select pg_notify('outbox', '') from queued limit 1`;
  return events;
}

const publishDelay = new Histogram({
  name: "outbox_publish_delay_seconds",
  help: "Time from an outbox row's commit to its publication on NATS",
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [metricsRegistry],
});

// Read at scrape time from the relay's database; one relay per process.
let pendingSource: Sql | undefined;
new Gauge({
  name: "outbox_oldest_unpublished_seconds",
  help: "Age of the oldest outbox row not yet published (0 when none): the outbox lag",
  registers: [metricsRegistry],
  async collect() {
    if (!pendingSource) return;
    const [row] = await pendingSource<{ age: number | null }[]>`
      select extract(epoch from clock_timestamp() - min(created_at))::float8 as age
      from outbox where published_at is null`;
    this.set(row?.age ?? 0);
  },
});

interface OutboxRow {
  id: string;
  subject: string;
  payload: Buffer;
  request_id: string | null;
  traceparent: string | null;
  age: number;
}

/** Publishes one row in the context of the request that raised it, with its ids as headers. */
async function publishRow(js: ReturnType<typeof jetstream>, row: OutboxRow, log: Logger): Promise<void> {
  if (!row.request_id && !row.traceparent) {
    await js.publish(row.subject, row.payload, { msgID: row.id, timeout: 5000 });
    return;
  }
  const ctx = beginContext("outbox publish", SpanKind.PRODUCER, {
    requestId: row.request_id,
    traceparent: row.traceparent,
  });
  await runInContext(ctx, async () => {
    const h = headers();
    h.set(REQUEST_ID_HEADER, ctx.requestId);
    h.set(TRACEPARENT_HEADER, traceparentOf(ctx));
    try {
      await js.publish(row.subject, row.payload, { msgID: row.id, timeout: 5000, headers: h });
      log.debug("event published", { subject: row.subject, eventId: row.id });
      endContext(ctx);
    } catch (err) {
      endContext(ctx, String(err));
      throw err;
    }
  });
}

/** Whether any outbox row waits for publication (the index `outbox_unpublished` answers it). */
async function anyUnpublished(sql: Sql): Promise<boolean> {
  const rows = await sql`select 1 from outbox where published_at is null limit 1`;
  return rows.length > 0;
}

export interface OutboxRelay {
  stop(): Promise<void>;
  /** Publishes whatever is pending now (tests, shutdown). */
  flush(): Promise<number>;
}

/**
 * Publishes committed outbox rows to JetStream with Nats-Msg-Id = event id, so a re-publish after
 * a crash is dropped by the stream's duplicate window. Replicas take turns (an advisory lock per
 * outbox), so rows reach the stream in the order they were written. While NATS is unreachable the rows stay unpublished (a
 * publish that is not confirmed rolls its batch back) and go out once it returns.
 */
export function startOutboxRelay(sql: Sql, nats: NatsLink, log: Logger, pollMs = 500): OutboxRelay {
  pendingSource = sql;
  let stopped = false;
  const idle = wakeablePause();
  // Rows wait in the outbox until NATS is first reached; then the relay starts at once.
  void nats.ready.then(() => idle.wake());

  const flush = async (): Promise<number> => {
    const nc = nats.current;
    if (!nc) return 0;
    const js = jetstream(nc);
    let total = 0;
    for (;;) {
      const n = await sql.begin(async (tx) => {
        // One relay at a time per outbox: two side by side would each publish part of the rows and
        // the stream could get a later event before an earlier one (a partner's webhook order).
        // And the rows are read by a plain index scan, never a bitmap one: the planner picks a
        // bitmap scan for the few rows it expects, and a bitmap scan never marks the index entries
        // of rows already published (dead) as dead, so every pass read them all again, back to the
        // last vacuum: 525-877 index entries an order in billing's outbox under the order load
        // (docs/benchmarks.md, "Issue 31, 2026-12-01 (fifth session)"). `set_config(…, true)` is
        // SET LOCAL: it ends with the transaction.
        await tx`select pg_advisory_xact_lock(hashtext('outbox-relay:' || current_schema())),
                        set_config('enable_bitmapscan', 'off', true)`;
        const rows = await tx<OutboxRow[]>`
          select id, subject, payload, request_id, traceparent,
                 extract(epoch from clock_timestamp() - created_at)::float8 as age
          from outbox where published_at is null
          order by created_at, id limit 200 for update skip locked`;
        // The rest of a batch is sent after the first row's ack, all before any of their acks is
        // awaited: nats.js writes what one tick sends in one flush, where awaiting each ack cost a
        // write and a wake-up per event (a quarter of the time billing spent in socket writes
        // under the order load). Order holds: the server stores one connection's messages in the
        // order they come, so a cut connection or a lost ack leaves a stored prefix, which the
        // retry's publishes (the same Nats-Msg-Id) find already stored. The first row goes alone
        // so that a stream not taking messages (NATS just restarted, its streams loading) refuses
        // the batch there, before a later row could be stored ahead of a refused one.
        const [first, ...rest] = rows;
        if (first) await publishRow(js, first, log);
        const published = await Promise.allSettled(rest.map((row) => publishRow(js, row, log)));
        const failed = published.find((r) => r.status === "rejected");
        if (failed) throw failed.reason;
        for (const row of rows) publishDelay.observe(row.age);
        if (rows.length) {
          await tx`update outbox set published_at = clock_timestamp() where id in ${tx(rows.map((r) => r.id))}`;
        }
        return rows.length;
      });
      total += n;
      if (n < 200) return total;
    }
  };

  const listener = wakeOnNotify(sql, "outbox", idle.wake, log);

  const loop = (async () => {
    // Published rows are removed by the service's retention (retention.ts), the one purge.
    let woken = true;
    let failed = false;
    while (!stopped) {
      try {
        // A pass the timer started, after one that left nothing behind, first asks whether any
        // row waits (one statement on the unpublished rows' index) before it takes the lock: at
        // rest that was a transaction of four statements twice a second in every service with
        // an outbox, for nothing (NOTIFY wakes the relay for each commit that queues a row).
        if (woken || failed || (await anyUnpublished(sql))) await flush();
        failed = false;
      } catch (err) {
        failed = true;
        log.warn("outbox relay failed, retrying", { err });
      }
      woken = await idle.pause(pollMs);
    }
  })();

  return {
    flush,
    stop: async () => {
      stopped = true;
      idle.wake();
      await loop;
      await listener.stop();
    },
  };
}
