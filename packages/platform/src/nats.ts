import {
  AckPolicy,
  DeliverPolicy,
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

export async function connectNats(url: string, name: string): Promise<NatsConnection> {
  return connect({ servers: url.split(","), name, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
}

/** Creates the streams when missing. Duplicate window: a re-published outbox row is dropped. */
export async function ensureStreams(nc: NatsConnection, ns: string): Promise<void> {
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

export async function ensureConsumer(
  nc: NatsConnection,
  stream: string,
  durable: string,
  filterSubject: string,
): Promise<void> {
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.consumers.info(stream, durable);
  } catch {
    await jsm.consumers.add(stream, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: filterSubject,
      // A batch is committed within milliseconds; after a crash its messages come back in 10 s.
      ack_wait: nanos(10_000),
      max_ack_pending: 10_000,
    });
  }
}

export { jetstream };

export interface BatchConsumer {
  stop(): Promise<void>;
}

/**
 * Pulls batches from a durable consumer and hands each batch to `handle`, acking only after it
 * returns (the handler commits first). A failing batch is nak'ed with a delay and comes back.
 * The loop re-runs after any error until stopped.
 */
export function consumeBatches(
  nc: NatsConnection,
  stream: string,
  durable: string,
  log: Logger,
  handle: (msgs: JsMsg[]) => Promise<void>,
  opts: { maxMessages?: number; expiresMs?: number } = {},
): BatchConsumer {
  const js = jetstream(nc);
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        const consumer = await js.consumers.get(stream, durable);
        while (!stopped) {
          const batch: JsMsg[] = [];
          const iter = await consumer.fetch({
            max_messages: opts.maxMessages ?? 500,
            expires: opts.expiresMs ?? 1000,
          });
          for await (const m of iter) batch.push(m);
          if (batch.length === 0) continue;
          try {
            await handle(batch);
            for (const m of batch) m.ack();
          } catch (err) {
            log.warn("batch failed, will be redelivered", { durable, err, size: batch.length });
            for (const m of batch) m.nak(2000);
          }
        }
      } catch (err) {
        if (stopped) break;
        log.warn("consumer loop error, retrying", { durable, err });
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}
