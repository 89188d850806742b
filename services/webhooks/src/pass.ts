import type { Client } from "@connectrpc/connect";
import type { PartnerLookupService } from "@hb/contracts/hb/auth/v1/partner_lookup_pb";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import {
  beginContext,
  endContext,
  type Logger,
  runInContext,
  SpanKind,
  type Sql,
  wakeablePause,
} from "@hb/platform";
import { type AttemptResult, attemptDelivery } from "./attempt.ts";
import { backoffSeconds } from "./backoff.ts";
import { deliveryMessage } from "./delivery-message.ts";
import { deliveriesTotal } from "./metrics.ts";

export interface PassOptions {
  timeoutMs: number;
  perPartner: number;
  batch: number;
  concurrency: number;
  /**
   * The stream position through which every event is stored (events-consumer.ts); a delivery
   * past it waits. Absent, or undefined (NATS away): only deliveries without a stream position and
   * those older than STREAM_WAIT_SECONDS are taken.
   */
  storedThrough?: () => Promise<number | undefined>;
}

/**
 * How long a delivery waits at most for the events before it in the stream: past this it is sent
 * anyway, so a batch that keeps failing to store cannot hold every partner's queue for ever.
 */
const STREAM_WAIT_SECONDS = 30;

/** Claims are made one at a time across replicas (a transaction-scoped advisory lock). */
const CLAIM_LOCK = 0x5eb_0c1a;

/** Successful attempts recorded per statement. */
const FLUSH_EVERY = 20;

/** How long a claim holds: one attempt's deadline plus a margin. */
const leaseSeconds = (opts: PassOptions) => Math.ceil(opts.timeoutMs / 1000) + 15;

interface DeliveryRow {
  id: string;
  partner_id: string;
  event: string;
  data: unknown;
  attempts: number;
  /** The request that raised the event, from its NATS headers. */
  request_id: string | null;
  traceparent: string | null;
  /** Stream position, then created_at to the microsecond, fixed width: the queue's order, which a Date would blur. */
  queued: string;
}

/**
 * One delivery pass. Claims due deliveries with a lease (FOR UPDATE SKIP LOCKED, so replicas
 * never take the same one), at most `perPartner` per partner so one busy partner cannot crowd out
 * the rest, then works through each partner's deliveries in creation order, stopping that
 * partner's queue at its first failure. Partners are served concurrently, so one endpoint that
 * hangs delays nobody else.
 */
export async function runPass(
  sql: Sql,
  auth: Client<typeof PartnerLookupService>,
  log: Logger,
  opts: PassOptions,
): Promise<{ claimed: number; done: Promise<number> }> {
  const through = (await opts.storedThrough?.()) ?? 0;
  // One claim at a time across replicas, each reading after the previous one committed: two
  // claims side by side could each take part of one partner's queue (the "partner already being
  // served" test reads a snapshot), and a row leased by a claim that committed after this
  // statement's snapshot would pass the sub-select's stale test.
  const claimed = await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${CLAIM_LOCK})`;
    return tx<DeliveryRow[]>`
    update deliveries set lease_until = clock_timestamp() + make_interval(secs => ${leaseSeconds(opts)})
    where id in (
      select id from deliveries where id in (
        select id from (
          select id, row_number() over (partition by partner_id order by stream_seq, created_at, id) as rn from deliveries
          where status = 'pending' and next_attempt_at <= clock_timestamp()
            and (lease_until is null or lease_until < clock_timestamp())
            -- every event before it in the stream is stored, so nothing earlier can still appear
            and (stream_seq is null or stream_seq <= ${through}
              or created_at < clock_timestamp() - make_interval(secs => ${STREAM_WAIT_SECONDS}))
            -- a partner still being served by an earlier pass keeps its order: skip it
            and partner_id not in (select partner_id from deliveries
              where status = 'pending' and lease_until >= clock_timestamp())
        ) due where rn <= ${opts.perPartner}
      )
        -- re-checked on the row's latest version when another transaction changed it meanwhile
        and status = 'pending' and (lease_until is null or lease_until < clock_timestamp())
      order by stream_seq, created_at, id limit ${opts.batch} for update skip locked
    )
    returning id, partner_id, event, data, attempts, request_id, traceparent,
      -- the queue's order as one sortable string: stream position (test events, which have none,
      -- after), then creation time
      lpad(coalesce(stream_seq, 9223372036854775807)::text, 19, '0')
        || to_char(created_at, 'YYYYMMDDHH24MISSUS') as queued`;
  });
  if (claimed.length === 0) return { claimed: 0, done: Promise.resolve(0) };

  const byPartner = new Map<string, DeliveryRow[]>();
  // In the order the deliveries were created (the claim's order), as every later pass takes them:
  // sorting by id (the event's) sent a claimed later event before an earlier one left unclaimed.
  const queueOrder = (a: DeliveryRow, b: DeliveryRow) =>
    a.queued === b.queued ? (a.id < b.id ? -1 : 1) : a.queued < b.queued ? -1 : 1;
  for (const d of claimed.sort(queueOrder)) {
    byPartner.set(d.partner_id, [...(byPartner.get(d.partner_id) ?? []), d]);
  }
  const [settings] = await sql<
    { max_attempts: number; base_delay_seconds: number; allowed_destinations: string[] }[]
  >`select * from programme_settings`;
  const allowed = new Set(settings.allowed_destinations);
  const urls = new Map(
    (
      await sql<
        { partner_id: string; url: string }[]
      >`select partner_id, url from partner_webhooks where partner_id in ${sql([...byPartner.keys()])}`
    ).map((r) => [r.partner_id, r.url]),
  );
  const partners = new Map(
    (await auth.getPartnerForDelivery({ customerIds: [...byPartner.keys()] })).partners.map((p) => [
      p.customerId,
      p,
    ]),
  );

  let attempted = 0;
  const release = (ids: string[]) =>
    ids.length ? sql`update deliveries set lease_until = null where id in ${sql(ids)}` : undefined;

  const servePartner = async (partnerId: string, queue: DeliveryRow[]) => {
    const partner = partners.get(partnerId);
    const url = urls.get(partnerId);
    if (partner?.status !== PartnerStatus.ACTIVE) {
      // Nothing goes out while the profile is pending or suspended; the deliveries wait.
      await release(queue.map((d) => d.id));
      return;
    }
    if (!url) {
      await sql`update deliveries set status = 'cancelled', lease_until = null, last_error = 'No webhook URL on file'
        where id in ${sql(queue.map((d) => d.id))}`;
      return;
    }
    // Successful attempts are recorded in batches (one statement per FLUSH_EVERY deliveries): a
    // crash can then repeat at most that many deliveries, with the same X-Webhook-Id, which
    // at-least-once delivery allows. The rest of the queue's claim is renewed as it goes, so other
    // passes keep skipping this partner and its order holds.
    const delivered: { id: string; code: number | null }[] = [];
    const flush = async () => {
      if (delivered.length === 0) return;
      const batch = delivered.slice();
      await sql`update deliveries d set status = 'delivered', attempts = d.attempts + 1, response_code = v.code,
          last_error = null, delivered_at = clock_timestamp(), lease_until = null
        from unnest(${batch.map((x) => x.id)}::uuid[], ${batch.map((x) => x.code)}::int[]) as v(id, code)
        where d.id = v.id`;
      delivered.splice(0, batch.length);
    };
    let current = 0;
    try {
      let renewedAt = Date.now();
      for (const [i, d] of queue.entries()) {
        current = i;
        if (Date.now() - renewedAt > (leaseSeconds(opts) * 1000) / 3) {
          renewedAt = Date.now();
          await sql`update deliveries set lease_until = clock_timestamp() + make_interval(secs => ${leaseSeconds(opts)})
            where id = any(${queue.slice(i).map((x) => x.id)}::uuid[])`;
        }
        attempted++;
        const attempts = d.attempts + 1;
        const final = attempts >= settings.max_attempts;
        const result = await attemptOne(d, partner, url, attempts, final);
        if (result.ok) {
          delivered.push({ id: d.id, code: result.status ?? null });
          if (delivered.length >= FLUSH_EVERY) await flush();
          continue;
        }
        await flush();
        await sql`update deliveries set attempts = ${attempts}, response_code = ${result.status ?? null},
          last_error = ${result.error ?? null}, lease_until = null,
          status = ${final ? "failed" : "pending"},
          next_attempt_at = clock_timestamp() + make_interval(secs => ${backoffSeconds(settings.base_delay_seconds, attempts)})
          where id = ${d.id}`;
        // The partner's queue stops at a failing delivery within this pass.
        await release(queue.slice(i + 1).map((x) => x.id));
        return;
      }
      await flush();
    } catch (err) {
      // A statement failed part-way (PostgreSQL away for a moment, a deadline). Deliveries the
      // partner already took are recorded if the database allows it now: released unrecorded,
      // the next pass would send them again at once. The one in hand keeps its claim until the
      // lease runs out, which also holds the partner's later deliveries behind it; those go back.
      await flush().catch(() => {});
      await release(queue.slice(current + 1).map((x) => x.id))?.catch(() => {});
      throw err;
    }
  };

  const attemptOne = (
    d: DeliveryRow,
    partner: { signingSecret: string },
    url: string,
    attempts: number,
    final: boolean,
  ): Promise<AttemptResult> => {
    // Each attempt runs in the context of the request that raised its event, however late.
    const ctx = beginContext("webhook delivery", SpanKind.CLIENT, {
      requestId: d.request_id,
      traceparent: d.traceparent,
    });
    return runInContext(ctx, async () => {
      let r: AttemptResult;
      if (!partner.signingSecret) r = { ok: false, error: "webhook secret not configured" };
      else {
        const message = deliveryMessage(d, partner.signingSecret);
        r = await attemptDelivery(url, message.body, message.headers, {
          timeoutMs: opts.timeoutMs,
          allowed,
        });
      }
      const outcome = r.ok ? "delivered" : final ? "failed" : "retry";
      deliveriesTotal.labels({ outcome }).inc();
      log.debug("webhook attempt", {
        deliveryId: d.id,
        event: d.event,
        attempt: attempts,
        outcome,
        status: r.status,
      });
      endContext(ctx, r.ok ? undefined : (r.error ?? `status ${r.status}`));
      return r;
    });
  };

  const entries = [...byPartner.entries()];
  let next = 0;
  const workers = Array.from({ length: Math.min(opts.concurrency, entries.length) }, async () => {
    while (next < entries.length) {
      const [partnerId, queue] = entries[next++];
      try {
        await servePartner(partnerId, queue);
      } catch (err) {
        // servePartner has already put back what it had not attempted.
        log.warn("partner delivery failed", { partnerId, err });
      }
    }
  });
  const done = Promise.all(workers).then(() => attempted);
  return { claimed: claimed.length, done };
}

/** Runs a pass every interval (once a minute by default). */
export function startPassLoop(
  sql: Sql,
  auth: Client<typeof PartnerLookupService>,
  log: Logger,
  intervalMs: number,
  opts: PassOptions,
) {
  let stopped = false;
  // Stopping ends the wait for the next pass at once (the interval is a minute by default).
  const idle = wakeablePause();
  const loop = (async () => {
    const inFlight = new Set<Promise<number>>();
    while (!stopped) {
      const started = Date.now();
      try {
        // A pass does not wait for slow partners: their deliveries stay leased while the next
        // pass serves everyone else, so one hanging endpoint delays nobody.
        const { done } = await runPass(sql, auth, log, opts);
        inFlight.add(done);
        void done.finally(() => inFlight.delete(done));
      } catch (err) {
        log.warn("delivery pass failed", { err });
      }
      // Passes start every interval, not an interval after the claim returned: under load the
      // claim's own time otherwise stretched the wait a queued delivery sees (issue 13).
      if (stopped) break;
      await idle.pause(Math.max(0, intervalMs - (Date.now() - started)));
    }
    await Promise.allSettled([...inFlight]);
  })();
  return {
    stop: async () => {
      stopped = true;
      idle.wake();
      await loop;
    },
  };
}
