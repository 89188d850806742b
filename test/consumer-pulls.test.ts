/**
 * The services' JetStream consumers wait on long pulls: a message is handed over as it arrives,
 * and an idle service asks NATS for nothing. Consumers that fetched batches with a one-second
 * expiry asked again every second whether or not anything came (idle NATS 3.5-4.0 ms of CPU a
 * second per stack against 0.8-1.3 without; docs/benchmarks.md) and held a message up to that
 * second (a built machine's report waited so long before billing made the service active).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";

const DURABLES = [
  ["REQLOG", "auth-request-log"],
  ["EVENTS", "billing-machine-events"],
  ["EVENTS", "compute-service-events"],
  ["EVENTS", "webhooks-deliveries"],
] as const;

/** A pull request's wait, as nats.js sends it (nanoseconds). */
interface PullRequest {
  expires?: number;
}

/** The fetch expiry with which a polling consumer asked NATS again, each time it ran out. */
const POLL_MS = 1000;
/**
 * How long pull requests are watched: what is tested is that none comes in this time, so the wait
 * is the measure, not a race. A polling consumer asks at least twice in it; a loaded host can only
 * make one ask less often (a weaker check), never make a consumer that waits ask.
 */
const WATCH_MS = 2.5 * POLL_MS;
/** What a pull of JetStream `consume` waits for messages (nats.js's default). */
const WAITING_PULL_MS = 30_000;

describe("the services' JetStream consumers", () => {
  const ns = process.env.HB_NS ?? "";
  const streamOf = (stream: string) => `${ns.toUpperCase()}_${stream}`;
  let nc: NatsConnection;
  before(async () => {
    assert.ok(ns, "HB_NS names the shared stack's streams");
    nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
  });
  after(() => nc?.close());

  it("wait on pulls of at least 30 s instead of asking NATS again every second", async () => {
    const seen: { durable: string; expiresMs: number }[] = [];
    const subs = DURABLES.map(([stream, durable]) =>
      nc.subscribe(`$JS.API.CONSUMER.MSG.NEXT.${streamOf(stream)}.${durable}`, {
        callback: (_err, m) => {
          // A pull without a JSON body, or without `expires`, waits until a message comes.
          let pull: PullRequest = {};
          try {
            pull = m.json<PullRequest>();
          } catch {}
          seen.push({ durable, expiresMs: pull.expires === undefined ? Infinity : pull.expires / 1e6 });
        },
      }),
    );
    await nc.flush();
    await new Promise((r) => setTimeout(r, WATCH_MS));
    for (const sub of subs) sub.unsubscribe();
    const short = seen.filter((p) => p.expiresMs < WAITING_PULL_MS);
    assert.deepEqual(short, [], "pull requests that expire within 30 s: a consumer polling");
  });

  it("let NATS deliver no more than a batch (500) ahead of their acks, so nothing waits in memory behind a slow batch", async () => {
    const jsm = await jetstreamManager(nc);
    const bounds = await Promise.all(
      DURABLES.map(async ([stream, durable]) => [
        durable,
        (await jsm.consumers.info(streamOf(stream), durable)).config.max_ack_pending,
      ]),
    );
    assert.deepEqual(
      bounds,
      DURABLES.map(([, durable]) => [durable, 500]),
    );
  });
});
