import {
  AckPolicy,
  type ConsumerNotification,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamClient,
  type JsMsg,
  jetstream,
  jetstreamManager,
} from "@nats-io/jetstream";
import { connect, type NatsConnection, nanos } from "@nats-io/transport-node";
import type { Logger } from "./log.ts";

export type { JetStreamClient, JsMsg, NatsConnection };

/** Stream and subject names, all under the run's namespace so parallel runs never meet. */
export function streams(ns: string) {
  const upper = ns.toUpperCase();
  return {
    events: { name: `${upper}_EVENTS`, subjects: [`${ns}.events.>`] },
    requestLog: { name: `${upper}_REQLOG`, subjects: [`${ns}.reqlog.>`] },
    eventSubject: (type: string) => `${ns}.events.${type}`,
    requestLogSubject: (service: string) => `${ns}.reqlog.${service}`,
  };
}

async function connectNats(url: string, name: string, asyncTraces = true): Promise<NatsConnection> {
  return connect({
    servers: url.split(","),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    noAsyncTraces: !asyncTraces,
  });
}

/**
 * A NATS connection made in the background, so a service starts and serves while NATS is down.
 * Until the first connection (streams ensured) `current` is undefined and `ready` pending; after
 * it, nats.js reconnects by itself and `connected()` says whether the link is up right now.
 */
export interface NatsLink {
  readonly current: NatsConnection | undefined;
  readonly ready: Promise<NatsConnection>;
  connected(): boolean;
  /** Drains the connection, or gives up trying to make one. */
  close(): Promise<void>;
}

export function linkNats(
  url: string,
  name: string,
  ns: string,
  log: Logger,
  opts: {
    retryMs?: number;
    maxRetryMs?: number;
    /**
     * false: requests (a JetStream publish is one) capture no stack where they started, which
     * nats.js otherwise builds as an Error (and a TimeoutError for the timer) for every request in
     * case it fails: 3–4% of billing's busy time under the order load, its outbox relay publishing
     * each event, of which this saves about half (nats.js still makes one error per request that
     * succeeded). A failed request's error then says what failed but not from where. Default true.
     */
    asyncTraces?: boolean;
  } = {},
): NatsLink {
  const retryMs = opts.retryMs ?? 250;
  // Well inside the 10 s within which a returning NATS must be in use again.
  const maxRetryMs = opts.maxRetryMs ?? 2000;
  let current: NatsConnection | undefined;
  let up = false;
  let closed = false;
  let cancelWait: (() => void) | undefined;
  let resolveReady: (nc: NatsConnection) => void = () => {};
  const ready = new Promise<NatsConnection>((resolve) => {
    resolveReady = resolve;
  });

  const watch = async (nc: NatsConnection) => {
    for await (const s of nc.status()) {
      if (s.type === "disconnect") {
        up = false;
        log.warn("NATS connection lost; reconnecting");
      } else if (s.type === "reconnect") {
        up = true;
        log.info("NATS connection back");
      }
    }
  };

  const attempts = (async () => {
    for (let failures = 0; !closed; failures++) {
      let nc: NatsConnection | undefined;
      try {
        nc = await connectNats(url, name, opts.asyncTraces);
        await ensureStreams(nc, ns);
        if (closed) {
          await nc.close();
          return;
        }
        current = nc;
        up = true;
        void watch(nc);
        if (failures > 0) log.info("NATS reached", { afterAttempts: failures + 1 });
        resolveReady(nc);
        return;
      } catch (err) {
        await nc?.close().catch(() => {});
        if (failures === 0 || failures % 30 === 0)
          log.warn("NATS unreachable; serving without it and retrying", { err, attempts: failures + 1 });
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, Math.min(maxRetryMs, retryMs * 2 ** failures));
          cancelWait = () => {
            clearTimeout(t);
            resolve();
          };
        });
      }
    }
  })();

  return {
    get current() {
      return current;
    },
    ready,
    connected: () => up,
    close: async () => {
      closed = true;
      cancelWait?.();
      await attempts;
      await current?.drain();
    },
  };
}

/** Creates the streams when missing. Duplicate window: a re-published outbox row is dropped. */
async function ensureStreams(nc: NatsConnection, ns: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const s = streams(ns);
  for (const cfg of [s.events, s.requestLog]) {
    try {
      await jsm.streams.info(cfg.name);
    } catch {
      try {
        await jsm.streams.add({
          name: cfg.name,
          subjects: cfg.subjects,
          duplicate_window: nanos(10 * 60 * 1000),
          max_age: nanos(7 * 24 * 3600 * 1000),
        });
      } catch (err) {
        // Another process created it between our info and add.
        await jsm.streams.info(cfg.name).catch(() => {
          throw err;
        });
      }
    }
  }
}

/**
 * The durable consumer, made when missing. `maxAckPending` bounds what NATS delivers ahead of the
 * acks: the loop below pulls continuously and keeps what arrives while a batch is handled, so
 * with a larger bound a slow batch left thousands waiting in memory, each redelivered (handled
 * twice) once it had waited past ack_wait. An existing consumer with another bound is updated.
 * The durables it `replaces` are deleted once it exists, with the same manager (making one asks
 * the server for its account info first).
 */
async function ensureConsumer(nc: NatsConnection, spec: DurableSpec, maxAckPending: number): Promise<void> {
  const { stream, durable, filterSubject } = spec;
  const jsm = await jetstreamManager(nc);
  let info: Awaited<ReturnType<typeof jsm.consumers.info>> | undefined;
  try {
    info = await jsm.consumers.info(stream, durable);
  } catch {
    await jsm.consumers.add(stream, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: filterSubject,
      // A batch is committed within milliseconds; after a crash its messages come back in 10 s.
      ack_wait: nanos(10_000),
      max_ack_pending: maxAckPending,
    });
  }
  if (info && info.config.max_ack_pending !== maxAckPending)
    await jsm.consumers.update(stream, durable, { max_ack_pending: maxAckPending });
  for (const old of spec.replaces ?? []) {
    try {
      await jsm.consumers.delete(stream, old);
    } catch (err) {
      // Already gone (another replica removed it, or it never existed): nothing to do.
      if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.ConsumerNotFound)) throw err;
    }
  }
}

export { jetstream };

export interface BatchConsumer {
  stop(): Promise<void>;
}

/** The durable consumer a loop reads; created when missing. */
export interface DurableSpec {
  stream: string;
  durable: string;
  filterSubject: string;
  /**
   * Durables of the same stream this one took over from: removed once this one exists, so NATS
   * does not keep tracking (and a stream with interest retention keep messages for) a reader
   * that is gone.
   */
  replaces?: readonly string[];
}

/**
 * How long a consumer gathers a steady stream into one batch (see `consumeBatches`). 20 ms: at
 * 3,000 events a second compute's two consumers of service events ran 350 batches a second
 * between them and 90 with it, and spent 52-62 µs of CPU an event against 77-86; an event waits at most
 * this, and only while events keep coming.
 */
export const GATHER_MS = 20;

/**
 * Logs what can hold a pull's messages back: nats.js answers a 409 on a pull (a limit exceeded,
 * the consumer deleted) by waiting for two missed heartbeats (30 s with `consume`'s defaults)
 * before it asks again, and says so only through these notifications. Expired pulls (408) and
 * heartbeats are the idle routine and stay quiet.
 */
async function reportStalls(
  notes: AsyncIterable<ConsumerNotification>,
  durable: string,
  log: Logger,
): Promise<void> {
  for await (const n of notes) {
    switch (n.type) {
      case "heartbeats_missed":
      case "consumer_deleted":
      case "consumer_not_found":
      case "stream_not_found":
      case "exceeded_limits":
      case "no_responders":
        log.warn("consumer pull held back", { durable, ...n });
        break;
      case "debug":
        if (n.code !== 408) log.warn("consumer pull held back", { durable, ...n });
        break;
    }
  }
}

/**
 * Hands the messages of a durable consumer to `handle` in batches, acking a batch only after
 * `handle` returns (the handler commits first). A failing batch is nak'ed with a delay and comes
 * back. The loop waits for the NATS link's first connection, creates the consumer when missing,
 * and re-runs after any error until stopped, so it starts with NATS down and resumes when it returns.
 *
 * It pulls continuously (JetStream `consume`, pulls that wait 30 s) and hands over whatever has
 * arrived as soon as the handler is free: the first message at once, then whatever arrived while
 * the previous batch was handled (up to `maxMessages`), so a burst still goes in large batches.
 * NATS delivers at most `maxMessages` ahead of the acks (`ensureConsumer`), as a fetch of that
 * many did, so no message waits in memory behind a slow batch until it is sent again.
 * Batches fetched with a one-second expiry held a message up to that second at a low rate and
 * asked NATS again every second when idle (a stack's idle CPU 28.0-34.4 ms a second against
 * 20.4-25.0, docs/benchmarks.md "Issue 31 §5, 2026-11-30 (late evening)").
 *
 * A batch starts at least `gatherMs` after the one before it started: after a quiet spell the
 * first message goes at once, and under a steady stream a batch holds what arrived in that time
 * rather than whatever came during the last (fast) handler: a batch costs its handler's round
 * trips and its acks' flush whatever its size (docs/benchmarks.md, "Issue 31, 2026-12-01").
 */
export function consumeBatches(
  nats: NatsLink,
  spec: DurableSpec,
  log: Logger,
  handle: (msgs: JsMsg[]) => Promise<void>,
  opts: { maxMessages?: number; gatherMs?: number } = {},
): BatchConsumer {
  const { stream, durable } = spec;
  let stopped = false;
  let wakeStopped: () => void = () => {};
  const whenStopped = new Promise<undefined>((resolve) => {
    wakeStopped = () => resolve(undefined);
  });
  let stopPull: () => void = () => {};
  const handleBatch = async (batch: JsMsg[]) => {
    try {
      await handle(batch);
      for (const m of batch) m.ack();
    } catch (err) {
      log.warn("batch failed, will be redelivered", { durable, err, size: batch.length });
      for (const m of batch) m.nak(2000);
    }
  };
  const max = opts.maxMessages ?? 500;
  const gatherMs = opts.gatherMs ?? GATHER_MS;
  const loop = (async () => {
    const nc = await Promise.race([nats.ready, whenStopped]);
    if (!nc) return;
    const js = jetstream(nc);
    while (!stopped) {
      try {
        await ensureConsumer(nc, spec, max);
        const consumer = await js.consumers.get(stream, durable);
        // The iterator's getPending() could not tell what has arrived: it counts the pull's status
        // callbacks too, so a batch waited for one more message, at the end of a burst up to the
        // pull's 30 s expiry (issue 13). The callback collects them instead.
        const arrived: JsMsg[] = [];
        let draining: Promise<void> | undefined;
        let lastStart = 0;
        const drain = async () => {
          while (arrived.length) {
            // Asked again after each wait: a timer counts from the event loop's cached time, which a
            // long turn of the loop leaves behind, so on a loaded host it can fire early (CI saw
            // two batches less than gatherMs apart once).
            for (
              let early = lastStart + gatherMs - Date.now();
              early > 0 && arrived.length < max;
              early = lastStart + gatherMs - Date.now()
            )
              await new Promise((r) => setTimeout(r, early));
            lastStart = Date.now();
            await handleBatch(arrived.splice(0, max));
          }
          draining = undefined;
        };
        const messages = await consumer.consume({
          max_messages: max,
          // A durable deleted under the pull ends it, and the loop makes the durable again; without
          // this nats.js asks for the missing consumer every 30 s for ever and nothing is read.
          abort_on_missing_resource: true,
          callback: (m) => {
            arrived.push(m);
            draining ??= drain();
          },
        });
        stopPull = () => messages.stop();
        if (stopped) messages.stop();
        void reportStalls(messages.status(), durable, log);
        const ended = await messages.closed();
        await draining;
        if (ended instanceof Error) throw ended;
        // The pull ended (stopped, or the consumer went away): set it up again.
      } catch (err) {
        if (stopped) break;
        log.warn("consumer loop error, retrying", { durable, err });
        await Promise.race([new Promise((r) => setTimeout(r, 1000)), whenStopped]);
      }
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      wakeStopped();
      stopPull();
      await loop;
    },
  };
}
