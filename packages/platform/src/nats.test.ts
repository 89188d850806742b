import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, nanos } from "@nats-io/transport-node";
import { eventually } from "../../../test/support/eventually.ts";
import { createLogger } from "./log.ts";
import { consumeBatches, linkNats, streams } from "./nats.ts";

const NATS_URL = process.env.NATS_URL ?? "nats://127.0.0.1:4222";

describe("consumeBatches", () => {
  it("brings a durable consumer made with a larger delivery bound to one batch's, and handles what waits", async () => {
    const ns = `natsbound${randomUUID().slice(0, 8)}`;
    const names = streams(ns);
    const stream = names.events.name;
    const nc = await connect({ servers: NATS_URL });
    const jsm = await jetstreamManager(nc);
    const log = createLogger("nats-test", "error");
    const link = linkNats(NATS_URL, "nats-test", ns, log);
    try {
      // The link makes the namespace's streams, as a service's does.
      await link.ready;
      // As every consumer was made before the bound: 10,000 delivered ahead of the acks.
      await jsm.consumers.add(stream, {
        durable_name: "old",
        ack_policy: AckPolicy.Explicit,
        filter_subject: `${ns}.events.>`,
        ack_wait: nanos(10_000),
        max_ack_pending: 10_000,
      });
      const js = jetstream(nc);
      for (let i = 0; i < 20; i++) await js.publish(`${ns}.events.test`, new TextEncoder().encode(String(i)));
      const handled: string[] = [];
      const consumer = consumeBatches(
        link,
        { stream, durable: "old", filterSubject: `${ns}.events.>` },
        log,
        async (msgs) => {
          handled.push(...msgs.map((m) => m.string()));
        },
        { maxMessages: 5 },
      );
      try {
        await eventually(async () => handled.length === 20, 10_000);
        assert.deepEqual(
          handled,
          Array.from({ length: 20 }, (_, i) => String(i)),
        );
        assert.equal((await jsm.consumers.info(stream, "old")).config.max_ack_pending, 5);
        await eventually(async () => (await jsm.consumers.info(stream, "old")).num_ack_pending === 0, 10_000);
      } finally {
        await consumer.stop();
      }
    } finally {
      await link.close();
      for (const name of [stream, names.requestLog.name]) await jsm.streams.delete(name).catch(() => {});
      await nc.close();
    }
  });
});
