import type { Client } from "@connectrpc/connect";
import type { PartnerLookupService } from "@hb/contracts/hb/auth/v1/partner_lookup_pb";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { type Logger, newId, type Sql, wakeablePause } from "@hb/platform";
import { type Drained, type DrainOptions, drainPartner } from "./drain.ts";
import { anyDue, claimPartners } from "./partner-lease.ts";

export interface PassOptions {
  timeoutMs: number;
  perPartner: number;
  /** Partners served at once by one process. */
  concurrency: number;
  /**
   * The stream position through which every event is stored (events-consumer.ts); a delivery
   * past it waits. Absent, or undefined (NATS away): only deliveries without a stream position and
   * those older than the stream wait (partner-lease.ts) are taken.
   */
  storedThrough?: () => Promise<number | undefined>;
}

/**
 * The ack floor read at most once per FLOOR_FRESH_MS, shared by every partner being served (each
 * re-reads it before each look at its queue).
 */
const FLOOR_FRESH_MS = 20;

function sharedFloor(read: PassOptions["storedThrough"]) {
  let last: { at: number; value: Promise<number> } | undefined;
  return {
    read: () => {
      if (!last || Date.now() - last.at > FLOOR_FRESH_MS) {
        last = { at: Date.now(), value: (read?.() ?? Promise.resolve(undefined)).then((v) => v ?? 0) };
      }
      return last.value;
    },
    /** Events were stored: the next read asks again. */
    stale: () => {
      last = undefined;
    },
  };
}

/**
 * Leases up to `n` partners with deliveries sendable now and starts serving each (drain.ts);
 * returns one promise per partner served. The programme's settings are read once for all of them.
 */
async function claimAndServe(
  sql: Sql,
  log: Logger,
  opts: PassOptions,
  holder: string,
  n: number,
  floor: ReturnType<typeof sharedFloor>,
  profile: DrainOptions["profile"],
  arrival?: DrainOptions["arrival"],
): Promise<{ partnerId: string; done: Promise<Drained> }[]> {
  const claimed = await claimPartners(sql, holder, n, opts.timeoutMs, await floor.read());
  if (claimed.length === 0) return [];
  const [settings] = await sql<
    { max_attempts: number; base_delay_seconds: number; allowed_destinations: string[] }[]
  >`select * from programme_settings`;
  const drainOpts = {
    timeoutMs: opts.timeoutMs,
    perPartner: opts.perPartner,
    maxAttempts: settings.max_attempts,
    baseDelaySeconds: settings.base_delay_seconds,
    allowed: new Set(settings.allowed_destinations),
    profile,
    storedThrough: floor.read,
    arrival,
  };
  return claimed.map((partnerId) => {
    const done = drainPartner(sql, log, holder, partnerId, drainOpts).catch((err) => {
      // drainPartner has already recorded what it could and freed or kept the lease.
      log.warn("partner delivery failed", { partnerId, err });
      return { attempted: 0, more: false };
    });
    return { partnerId, done };
  });
}

/**
 * Partners' signing secrets from auth (undefined for a partner that may not receive anything),
 * the partners asked for within a millisecond in one call.
 */
export function partnerProfiles(auth: Client<typeof PartnerLookupService>) {
  let asked:
    | Map<string, { resolve: (s: string | undefined) => void; reject: (e: unknown) => void }[]>
    | undefined;
  const lookUp = async () => {
    const batch = asked!;
    asked = undefined;
    try {
      const { partners } = await auth.getPartnerForDelivery({ customerIds: [...batch.keys()] });
      const found = new Map(partners.map((p) => [p.customerId, p]));
      for (const [id, waiters] of batch) {
        const p = found.get(id);
        for (const w of waiters) w.resolve(p?.status === PartnerStatus.ACTIVE ? p.signingSecret : undefined);
      }
    } catch (err) {
      for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
    }
  };
  return (partnerId: string) =>
    new Promise<string | undefined>((resolve, reject) => {
      if (!asked) {
        asked = new Map();
        setTimeout(lookUp, 1);
      }
      asked.set(partnerId, [...(asked.get(partnerId) ?? []), { resolve, reject }]);
    });
}

/**
 * One pass now (the staff RPC and `hb webhooks pass`): serves every partner with deliveries
 * sendable now that no one else is serving, up to `concurrency`, once each, and resolves with the
 * number of attempts made once they are all done.
 */
export async function runPass(
  sql: Sql,
  auth: Client<typeof PartnerLookupService>,
  log: Logger,
  opts: PassOptions,
): Promise<{ claimed: number; done: Promise<number> }> {
  const served = await claimAndServe(
    sql,
    log,
    opts,
    newId(),
    opts.concurrency,
    sharedFloor(opts.storedThrough),
    partnerProfiles(auth),
  );
  const done = Promise.all(served.map((s) => s.done)).then((r) => r.reduce((n, d) => n + d.attempted, 0));
  return { claimed: served.length, done };
}

/**
 * Serves partners continuously, up to `concurrency` at once, each under its lease until its queue
 * is empty (drain.ts). A new claim is made when events were stored (`stored`), when a partner
 * left with more to send or a slot freed while all were taken, while the ack floor lags behind
 * what this process stored (a short, growing wait), and otherwise every `intervalMs` (for
 * deliveries coming due after back-off). One hanging endpoint holds only its own partner.
 */
export function startPassLoop(
  sql: Sql,
  auth: Client<typeof PartnerLookupService>,
  log: Logger,
  intervalMs: number,
  opts: PassOptions,
) {
  const holder = newId();
  const floor = sharedFloor(opts.storedThrough);
  const profile = partnerProfiles(auth);
  const serving = new Map<string, Promise<Drained>>();
  let stopped = false;
  let storedHere = 0;
  let lagWaitMs = 10;
  // Claims this loop has made (observable by tests that need "a few claims happened").
  let claims = 0;
  const idle = wakeablePause();
  // Partners whose queue ran empty, waiting for their next events (drain.ts).
  const waiting = new Map<string, () => void>();
  const wakeWaiting = (partners: Iterable<string>) => {
    for (const p of partners) waiting.get(p)?.();
  };
  const arrival = (partnerId: string, ms: number) =>
    stopped
      ? Promise.resolve(false)
      : new Promise<boolean>((resolve) => {
          const timer = setTimeout(end, ms);
          function end() {
            clearTimeout(timer);
            waiting.delete(partnerId);
            resolve(!stopped);
          }
          waiting.set(partnerId, end);
        });
  // The last pass claimed nothing, nothing lagged, and the pause after it ran out (no event was
  // stored here and no partner left with more): the next one first asks whether anything is due.
  let quiet = false;
  const loop = (async () => {
    while (!stopped) {
      let lagging = false;
      let claimed = 0;
      try {
        const free = opts.concurrency - serving.size;
        // At rest a pass was a JetStream request (the ack floor) and a claim, each interval in each
        // replica; one probe of the pending deliveries' index says that nothing is due. A quiet
        // pass that finds nothing counts as a claim that found nothing, which is what it stands for.
        const skip: boolean = quiet && !(await anyDue(sql));
        if (free > 0 && !skip) {
          for (const { partnerId, done } of await claimAndServe(
            sql,
            log,
            opts,
            holder,
            free,
            floor,
            profile,
            arrival,
          )) {
            claimed++;
            serving.set(partnerId, done);
            void done.then((d) => {
              const wasFull = serving.size >= opts.concurrency;
              serving.delete(partnerId);
              if (d.more || wasFull) idle.wake();
            });
          }
        }
        if (free > 0) claims++;
        lagging = !skip && (await floor.read()) < storedHere;
      } catch (err) {
        log.warn("delivery pass failed", { err });
      }
      if (stopped) break;
      // Events stored here but not yet under the floor (their ack is on its way, or another
      // replica has not stored an earlier batch yet) are looked at again shortly.
      lagWaitMs = lagging ? Math.min(lagWaitMs * 2, intervalMs) : 10;
      // The floor may have passed what waiting partners were held back by.
      if (lagging) wakeWaiting([...waiting.keys()]);
      const woken = await idle.pause(lagging ? lagWaitMs : intervalMs);
      quiet = !woken && !lagging && claimed === 0;
    }
    await Promise.allSettled([...serving.values()]);
  })();
  return {
    /** How many claims the loop has made so far. */
    claims: () => claims,
    /** Events up to stream position `seq` were stored, for `partners`: serve them now. */
    stored: (seq: number, partners: Iterable<string>) => {
      storedHere = Math.max(storedHere, seq);
      floor.stale();
      wakeWaiting(partners);
      idle.wake();
    },
    stop: async () => {
      stopped = true;
      wakeWaiting([...waiting.keys()]);
      idle.wake();
      await loop;
    },
  };
}
