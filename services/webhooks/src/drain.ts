import { beginContext, endContext, type Logger, runInContext, SpanKind, type Sql } from "@hb/platform";
import { type AttemptResult, attemptDelivery } from "./attempt.ts";
import { backoffSeconds } from "./backoff.ts";
import { deliveryMessage } from "./delivery-message.ts";
import { deliveriesTotal } from "./metrics.ts";
import { leaseSeconds, releaseLease, renewLease, sendableNow } from "./partner-lease.ts";

/** Successful attempts recorded per statement. */
const FLUSH_EVERY = 20;

interface DeliveryRow {
  id: string;
  event: string;
  data: unknown;
  attempts: number;
  /** The request that raised the event, from its NATS headers. */
  request_id: string | null;
  traceparent: string | null;
  /** The partner's URL on file when the queue was read. */
  url: string | null;
}

export interface DrainOptions {
  timeoutMs: number;
  /** At most this many attempts per lease held, so one busy partner cannot crowd out the rest. */
  perPartner: number;
  maxAttempts: number;
  baseDelaySeconds: number;
  allowed: ReadonlySet<string>;
  /**
   * The partner's signing secret ("" when none), or undefined while it may not receive anything
   * (pending, suspended, unknown), read now from auth.
   */
  profile: (partnerId: string) => Promise<string | undefined>;
  /** The consumer's ack floor now (see `sendableNow`). */
  storedThrough: () => Promise<number>;
  /**
   * Resolves when events for the partner were stored, or after `ms`; false when the process is
   * stopping. Given, a partner whose queue ran empty is kept that long for its next events
   * instead of being released and claimed again.
   */
  arrival?: (partnerId: string, ms: number) => Promise<boolean>;
}

/**
 * How long an emptied queue keeps its lease waiting for the partner's next events. A claim costs
 * a lease write and its release another, plus the partner's profile from auth: at a steady rate
 * of events a partner's queue empties after nearly every delivery, and those were most of the work.
 */
const LINGER_MS = 250;

export interface Drained {
  attempted: number;
  /** It stopped at the per-lease limit with deliveries still sendable: serve it again soon. */
  more: boolean;
}

/** The first `n` deliveries of the partner's queue sendable now, in queue order. */
export function queueHead(sql: Sql, partnerId: string, through: number, n: number) {
  return sql<DeliveryRow[]>`
    select id, event, data, attempts, request_id, traceparent,
      (select url from partner_webhooks where partner_id = ${partnerId}) as url
    from deliveries d
    where d.partner_id = ${partnerId} and ${sendableNow(sql, through)}
    order by d.stream_seq, d.created_at, d.id limit ${n}`;
}

/** A delivery answered with a 2xx (`code`, the status). */
export interface Sent {
  id: string;
  code: number | null;
}

/**
 * Records successful attempts (status, count and answer in one update per delivery) while
 * `holder` still holds the partner's lease; the number recorded, 0 when the lease was taken.
 *
 * Only the holder records, under a lock on the partner's queue row that a claim skips: a holder
 * that stalled past its lease and recorded after the next holder had read its part of the queue
 * made the next holder send a delivery recorded delivered (test/webhook-lease-interleavings.test.ts
 * found it: recorded between the new holder's read and its send). What a replica that lost its
 * lease sent is left unrecorded and sent again by the next holder, as at-least-once allows.
 */
export async function recordDelivered(sql: Sql, holder: string, partnerId: string, sent: Sent[]) {
  const rows = await sql`with held as (
      select 1 from partner_queues where partner_id = ${partnerId} and holder = ${holder} for share
    )
    update deliveries d set status = 'delivered', attempts = d.attempts + 1, response_code = v.code,
      last_error = null, delivered_at = clock_timestamp()
    from unnest(${sent.map((x) => x.id)}::uuid[], ${sent.map((x) => x.code)}::int[]) as v(id, code), held
    where d.id = v.id`;
  return rows.count;
}

/**
 * Serves one partner whose lease `holder` holds: its sendable deliveries in queue order, re-read
 * as they are sent so events stored meanwhile follow at once, until none is left, one fails (the
 * queue stops there; the next pass sends the later ones, so a failing delivery is overtaken once
 * it backs off), `perPartner` were attempted, or the lease is lost. Then the lease is released.
 */
export async function drainPartner(
  sql: Sql,
  log: Logger,
  holder: string,
  partnerId: string,
  opts: DrainOptions,
): Promise<Drained> {
  const release = () => releaseLease(sql, holder, partnerId);
  // Successful attempts are recorded in batches (one statement per FLUSH_EVERY, and before the
  // queue is re-read): a crash can then repeat only those not yet recorded, with the same
  // X-Webhook-Id, which at-least-once delivery allows. A delivery is written once more in all:
  // its attempt, count and status in one update.
  const delivered: Sent[] = [];
  const flush = async () => {
    if (delivered.length === 0) return;
    const batch = delivered.slice();
    await recordDelivered(sql, holder, partnerId, batch);
    delivered.splice(0, batch.length);
  };
  let attempted = 0;
  let renewedAt = Date.now();
  let lingerUntil: number | undefined;
  try {
    for (;;) {
      const queue = await queueHead(sql, partnerId, await opts.storedThrough(), opts.perPartner - attempted);
      if (queue.length === 0) {
        if (!opts.arrival) break;
        lingerUntil ??= Date.now() + LINGER_MS;
        const left = lingerUntil - Date.now();
        if (left <= 0) break;
        if (await opts.arrival(partnerId, left)) continue;
        break;
      }
      lingerUntil = undefined;
      // The profile and URL are read after the queue, for each part of it: whatever is sent was
      // stored before they were read, so an event queued after a suspension or a URL removal is
      // never sent under the state before it.
      const secret = await opts.profile(partnerId);
      const url = queue[0].url;
      if (secret === undefined || !url) {
        await flush();
        // Nothing goes out while the profile is pending or suspended; the deliveries wait.
        if (secret !== undefined)
          await sql`update deliveries set status = 'cancelled', last_error = 'No webhook URL on file'
            where partner_id = ${partnerId} and status = 'pending'`;
        await release();
        return { attempted, more: false };
      }
      for (const d of queue) {
        if (Date.now() - renewedAt > (leaseSeconds(opts.timeoutMs) * 1000) / 3) {
          renewedAt = Date.now();
          if (!(await renewLease(sql, holder, partnerId, opts.timeoutMs))) {
            // Taken over after this process stalled past the lease: the new holder sends the rest,
            // and what this one sent unrecorded again (only a holder records: recordDelivered).
            return { attempted, more: false };
          }
        }
        attempted++;
        const attempts = d.attempts + 1;
        const final = attempts >= opts.maxAttempts;
        const result = await attemptOne(log, d, url, secret, attempts, final, opts);
        if (result.ok) {
          delivered.push({ id: d.id, code: result.status ?? null });
          if (delivered.length >= FLUSH_EVERY) await flush();
          continue;
        }
        await flush();
        await sql`update deliveries set attempts = ${attempts}, response_code = ${result.status ?? null},
          last_error = ${result.error ?? null}, status = ${final ? "failed" : "pending"},
          next_attempt_at = clock_timestamp() + make_interval(secs => ${backoffSeconds(opts.baseDelaySeconds, attempts)})
          -- a holder that stalled past its lease must not undo what the next holder recorded
          where id = ${d.id} and status = 'pending'`;
        await release();
        return { attempted, more: false };
      }
      await flush();
      if (attempted >= opts.perPartner) {
        await release();
        return { attempted, more: true };
      }
    }
    await release();
    return { attempted, more: false };
  } catch (err) {
    // A statement failed part-way (PostgreSQL away for a moment, a deadline). Deliveries already
    // sent are recorded if the database allows it now, and then the partner is free again: the
    // delivery in hand, if its outcome was not recorded, is sent again. If they cannot be
    // recorded, the lease stays until it runs out, so they are not sent again at once.
    try {
      await flush();
      await release();
    } catch {}
    throw err;
  }
}

function attemptOne(
  log: Logger,
  d: DeliveryRow,
  url: string,
  secret: string,
  attempts: number,
  final: boolean,
  opts: DrainOptions,
): Promise<AttemptResult> {
  // Each attempt runs in the context of the request that raised its event, however late.
  const ctx = beginContext("webhook delivery", SpanKind.CLIENT, {
    requestId: d.request_id,
    traceparent: d.traceparent,
  });
  return runInContext(ctx, async () => {
    let r: AttemptResult;
    if (!secret) r = { ok: false, error: "webhook secret not configured" };
    else {
      const message = deliveryMessage(d, secret);
      r = await attemptDelivery(url, message.body, message.headers, {
        timeoutMs: opts.timeoutMs,
        allowed: opts.allowed,
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
}
