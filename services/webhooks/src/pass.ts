import type { Client } from "@connectrpc/connect";
import type { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { type Logger, type Sql, signBody } from "@hb/platform";
import { type AttemptResult, attemptDelivery, USER_AGENT } from "./attempt.ts";
import { backoffSeconds } from "./backoff.ts";

export interface PassOptions {
  timeoutMs: number;
  perPartner: number;
  batch: number;
  concurrency: number;
}

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
  auth: Client<typeof AuthService>,
  log: Logger,
  opts: PassOptions,
): Promise<{ claimed: number; done: Promise<number> }> {
  const claimed = await sql<DeliveryRow[]>`
    update deliveries set lease_until = clock_timestamp() + make_interval(secs => ${leaseSeconds(opts)})
    where id in (
      select id from deliveries where id in (
        select id from (
          select id, row_number() over (partition by partner_id order by created_at, id) as rn from deliveries
          where status = 'pending' and next_attempt_at <= clock_timestamp()
            and (lease_until is null or lease_until < clock_timestamp())
            -- a partner still being served by an earlier pass keeps its order: skip it
            and partner_id not in (select partner_id from deliveries
              where status = 'pending' and lease_until >= clock_timestamp())
        ) due where rn <= ${opts.perPartner}
      ) order by created_at, id limit ${opts.batch} for update skip locked
    )
    returning id, partner_id, event, data, attempts`;
  if (claimed.length === 0) return { claimed: 0, done: Promise.resolve(0) };

  const byPartner = new Map<string, DeliveryRow[]>();
  for (const d of claimed.sort((a, b) => (a.id < b.id ? -1 : 1))) {
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
      const ids = delivered.map((x) => x.id);
      const codes = delivered.map((x) => x.code);
      delivered.length = 0;
      await sql`update deliveries d set status = 'delivered', attempts = d.attempts + 1, response_code = v.code,
          last_error = null, delivered_at = clock_timestamp(), lease_until = null
        from unnest(${ids}::uuid[], ${codes}::int[]) as v(id, code) where d.id = v.id`;
    };
    let renewedAt = Date.now();
    for (const [i, d] of queue.entries()) {
      if (Date.now() - renewedAt > (leaseSeconds(opts) * 1000) / 3) {
        renewedAt = Date.now();
        await sql`update deliveries set lease_until = clock_timestamp() + make_interval(secs => ${leaseSeconds(opts)})
          where id = any(${queue.slice(i).map((x) => x.id)}::uuid[])`;
      }
      attempted++;
      const timestamp = new Date().toISOString();
      const body = JSON.stringify({ event: d.event, timestamp, data: d.data });
      let result: AttemptResult;
      if (!partner.signingSecret) result = { ok: false, error: "webhook secret not configured" };
      else {
        result = await attemptDelivery(
          url,
          body,
          {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "X-Webhook-Event": d.event,
            "X-Webhook-Id": d.id,
            "X-Webhook-Timestamp": timestamp,
            "X-Webhook-Signature": signBody(partner.signingSecret, body),
          },
          { timeoutMs: opts.timeoutMs, allowed },
        );
      }
      if (result.ok) {
        delivered.push({ id: d.id, code: result.status ?? null });
        if (delivered.length >= FLUSH_EVERY) await flush();
        continue;
      }
      await flush();
      const attempts = d.attempts + 1;
      const final = attempts >= settings.max_attempts;
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
  };

  const entries = [...byPartner.entries()];
  let next = 0;
  const workers = Array.from({ length: Math.min(opts.concurrency, entries.length) }, async () => {
    while (next < entries.length) {
      const [partnerId, queue] = entries[next++];
      try {
        await servePartner(partnerId, queue);
      } catch (err) {
        log.warn("partner delivery failed", { partnerId, err });
        await release(queue.map((d) => d.id))?.catch(() => {});
      }
    }
  });
  const done = Promise.all(workers).then(() => attempted);
  return { claimed: claimed.length, done };
}

/** Runs a pass every interval (once a minute by default). */
export function startPassLoop(
  sql: Sql,
  auth: Client<typeof AuthService>,
  log: Logger,
  intervalMs: number,
  opts: PassOptions,
) {
  let stopped = false;
  const loop = (async () => {
    const inFlight = new Set<Promise<number>>();
    while (!stopped) {
      try {
        // A pass does not wait for slow partners: their deliveries stay leased while the next
        // pass serves everyone else, so one hanging endpoint delays nobody.
        const { done } = await runPass(sql, auth, log, opts);
        inFlight.add(done);
        void done.finally(() => inFlight.delete(done));
      } catch (err) {
        log.warn("delivery pass failed", { err });
      }
      await new Promise((r) => setTimeout(r, intervalMs));
    }
    await Promise.allSettled([...inFlight]);
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}
