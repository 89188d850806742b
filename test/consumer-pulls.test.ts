/**
 * The services' JetStream consumers wait on long pulls: a message is handed over as it arrives,
 * and an idle service asks NATS for nothing. Consumers that fetched batches with a one-second
 * expiry asked again every second whether or not anything came (idle NATS 3.5-4.0 ms of CPU a
 * second per stack against 0.8-1.3 without; docs/benchmarks.md) and held a message up to that
 * second (a built machine's report waited so long before billing made the service active).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";

const DURABLES = [
  ["REQLOG", "auth-request-log"],
  ["EVENTS", "billing-machine-events"],
  ["EVENTS", "compute-service-events"],
  ["EVENTS", "compute-service-records"],
  ["EVENTS", "webhooks-deliveries"],
] as const;

/** A pull request's wait, as nats.js sends it (nanoseconds). */
interface PullRequest {
  expires?: number;
}

describe("the services' JetStream consumers", () => {
  it("wait on pulls of at least 30 s instead of asking NATS again every second", async () => {
    const ns = process.env.HB_NS;
    assert.ok(ns, "HB_NS names the shared stack's streams");
    const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
    try {
      const seen: { durable: string; expiresMs: number }[] = [];
      for (const [stream, durable] of DURABLES)
        nc.subscribe(`$JS.API.CONSUMER.MSG.NEXT.${ns.toUpperCase()}_${stream}.${durable}`, {
          callback: (_err, m) => {
            // A pull without a JSON body, or without `expires`, waits until a message comes.
            let pull: PullRequest = {};
            try {
              pull = m.json<PullRequest>();
            } catch {}
            seen.push({ durable, expiresMs: pull.expires === undefined ? Infinity : pull.expires / 1e6 });
          },
        });
      await nc.flush();
      // A consumer that polled each second asks at least twice in this window.
      await new Promise((r) => setTimeout(r, 2500));
      const short = seen.filter((p) => p.expiresMs < 30_000);
      assert.deepEqual(short, [], "pull requests that expire within 30 s: a consumer polling");
    } finally {
      await nc.close();
    }
  });

  it("let NATS deliver no more than a batch (500) ahead of their acks, so nothing waits in memory behind a slow batch", async () => {
    const ns = process.env.HB_NS;
    assert.ok(ns, "HB_NS names the shared stack's streams");
    const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
    try {
      const jsm = await jetstreamManager(nc);
      const bounds = await Promise.all(
        DURABLES.map(async ([stream, durable]) => {
          const info = await jsm.consumers.info(`${ns.toUpperCase()}_${stream}`, durable);
          return [durable, info.config.max_ack_pending];
        }),
      );
      assert.deepEqual(
        bounds,
        DURABLES.map(([, durable]) => [durable, 500]),
      );
    } finally {
      await nc.close();
    }
  });
});
