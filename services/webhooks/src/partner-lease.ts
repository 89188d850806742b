import type { Sql } from "@hb/platform";

/**
 * How long a delivery waits at most for the events before it in the stream: past this it is sent
 * anyway, so a batch that keeps failing to store cannot hold every partner's queue for ever.
 */
const STREAM_WAIT_SECONDS = 30;

/** How long a partner's lease holds unrenewed: one attempt's deadline plus a margin. */
export const leaseSeconds = (timeoutMs: number) => Math.ceil(timeoutMs / 1000) + 15;

/** A pending delivery whose next attempt is due (`d` is the deliveries row). */
const dueNow = (sql: Sql) => sql`d.status = 'pending' and d.next_attempt_at <= clock_timestamp()`;

/**
 * A pending delivery that may be attempted now (`d` is the deliveries row): due, and every event
 * before it in the stream is stored (`through`, the consumer's ack floor), so nothing earlier can
 * still appear. Deliveries made here (test events) have no stream position and wait for nothing.
 */
export const sendableNow = (sql: Sql, through: number) => sql`
  ${dueNow(sql)}
  and (d.stream_seq is null or d.stream_seq <= ${through}
    or d.created_at < clock_timestamp() - make_interval(secs => ${STREAM_WAIT_SECONDS}))`;

/**
 * Whether any delivery is pending and due at all (the pending deliveries' index answers it): the
 * cheap first question of a pass the timer started, before the ack floor is read from JetStream
 * and a claim is made.
 */
export async function anyDue(sql: Sql): Promise<boolean> {
  const rows = await sql`select 1 from deliveries d where ${dueNow(sql)} limit 1`;
  return rows.length > 0;
}

/**
 * Leases up to `n` partners that have a delivery sendable now and whose lease is free (never
 * taken, released, or run out: a crashed holder's), least recently served first, to `holder`.
 * `FOR UPDATE SKIP LOCKED` re-checks the lease on the row's latest version, so two replicas
 * claiming side by side never both get one partner.
 */
export async function claimPartners(
  sql: Sql,
  holder: string,
  n: number,
  timeoutMs: number,
  through: number,
): Promise<string[]> {
  const rows = await sql<{ partner_id: string }[]>`
    with free as (
      select q.partner_id from partner_queues q
      where (q.lease_until is null or q.lease_until < clock_timestamp())
        and exists (select 1 from deliveries d where d.partner_id = q.partner_id and ${sendableNow(sql, through)})
      order by q.lease_until nulls first
      limit ${n}
      for update skip locked
    )
    update partner_queues q set holder = ${holder},
      lease_until = clock_timestamp() + make_interval(secs => ${leaseSeconds(timeoutMs)})
    from free where q.partner_id = free.partner_id
    returning q.partner_id`;
  return rows.map((r) => r.partner_id);
}

/** Extends the lease while its holder still has it; false when it has lost it (run out and taken). */
export async function renewLease(sql: Sql, holder: string, partnerId: string, timeoutMs: number) {
  const rows = await sql`update partner_queues
    set lease_until = clock_timestamp() + make_interval(secs => ${leaseSeconds(timeoutMs)})
    where partner_id = ${partnerId} and holder = ${holder} returning 1`;
  return rows.length === 1;
}

/**
 * Frees the lease at once. It keeps the release time, which orders the next claim: the partner
 * goes behind those waiting longer.
 */
export async function releaseLease(sql: Sql, holder: string, partnerId: string) {
  await sql`update partner_queues set holder = null, lease_until = clock_timestamp()
    where partner_id = ${partnerId} and holder = ${holder}`;
}
