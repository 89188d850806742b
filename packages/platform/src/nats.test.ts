import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import {
  AckPolicy,
  type JetStreamManager,
  type JsMsg,
  jetstream,
  jetstreamManager,
} from "@nats-io/jetstream";
import { connect, type NatsConnection, nanos } from "@nats-io/transport-node";
import { eventually } from "../../../test/support/eventually.ts";
import { createLogger, type Logger } from "./log.ts";
import { consumeBatches, linkNats, type NatsLink, streams } from "./nats.ts";

const NATS_URL = process.env.NATS_URL ?? "nats://127.0.0.1:4222";

interface Namespace {
  ns: string;
  stream: string;
  nc: NatsConnection;
  jsm: JetStreamManager;
  log: Logger;
  link: NatsLink;
}

/** A fresh namespace with a service's NATS link (which makes its streams), removed afterwards. */
async function withNamespace(prefix: string, fn: (n: Namespace) => Promise<void>) {
  const ns = `${prefix}${randomUUID().slice(0, 8)}`;
  const names = streams(ns);
  const nc = await connect({ servers: NATS_URL });
  const jsm = await jetstreamManager(nc);
  const log = createLogger("nats-test", "error");
  const link = linkNats(NATS_URL, "nats-test", ns, log);
  try {
    await link.ready;
    await fn({ ns, stream: names.events.name, nc, jsm, log, link });
  } finally {
    await link.close();
    for (const name of [names.events.name, names.requestLog.name])
      await jsm.streams.delete(name).catch(() => {});
    await nc.close();
  }
}

/** A handler that keeps each message's body in `handled`, in the order handled. */
const bodiesInto =
  (handled: string[]) =>
  async (msgs: JsMsg[]): Promise<void> => {
    handled.push(...msgs.map((m) => m.string()));
  };

describe("consumeBatches", () => {
  it("brings a durable consumer made with a larger delivery bound to one batch's, and handles what waits", async () => {
    // The link makes the namespace's streams, as a service's does.
    await withNamespace("natsbound", async ({ ns, stream, nc, jsm, log, link }) => {
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
        bodiesInto(handled),
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
    });
  });
  it("removes the durables it replaces, and starts when they are already gone", async () => {
    await withNamespace("natsreplace", async ({ ns, stream, nc, jsm, log, link }) => {
      await jsm.consumers.add(stream, {
        durable_name: "retired",
        ack_policy: AckPolicy.Explicit,
        filter_subject: `${ns}.events.>`,
      });
      const spec = {
        stream,
        durable: "merged",
        filterSubject: `${ns}.events.>`,
        replaces: ["retired", "never-made"],
      };
      const names = async () => (await (await jsm.consumers.list(stream)).next()).map((c) => c.name).sort();
      // The first start runs on a connection of its own, closed after it stops, as a replica that
      // stops closes its own. NATS 2.9 keeps a stopped pull's request while its connection lives
      // and may hand it the next message, which then waits out the 10 s ack_wait: on a shared
      // connection the second start's message came 10 s late in 8 of 40 rounds, with the first
      // start's connection closed in none of 30.
      const firstLink = linkNats(NATS_URL, "nats-test", ns, log);
      try {
        await firstLink.ready;
        const first = consumeBatches(firstLink, spec, log, async () => {});
        try {
          await eventually(async () => (await names()).join() === "merged", 10_000);
        } finally {
          await first.stop();
        }
      } finally {
        await firstLink.close();
      }
      // A second start (another replica, a restart) finds nothing to remove and runs on.
      const handled: string[] = [];
      const again = consumeBatches(link, spec, log, bodiesInto(handled));
      try {
        await jetstream(nc).publish(`${ns}.events.test`, new TextEncoder().encode("after"));
        await eventually(async () => handled.join() === "after", 10_000);
        assert.deepEqual(await names(), ["merged"]);
      } finally {
        await again.stop();
      }
    });
  });

  it("makes its durable again when it is deleted under the pull, says so in the log, and reads on", async () => {
    await withNamespace("natsdeleted", async ({ ns, stream, nc, jsm, link }) => {
      const warnings: string[] = [];
      const quiet = () => {};
      const log: Logger = { debug: quiet, info: quiet, error: quiet, warn: (msg) => warnings.push(msg) };
      const handled: string[] = [];
      const consumer = consumeBatches(
        link,
        { stream, durable: "d", filterSubject: `${ns}.events.>` },
        log,
        bodiesInto(handled),
      );
      try {
        const js = jetstream(nc);
        await js.publish(`${ns}.events.test`, new TextEncoder().encode("before"));
        await eventually(async () => handled.includes("before"), 10_000);
        await jsm.consumers.delete(stream, "d");
        await eventually(async () => warnings.includes("consumer pull held back"), 10_000);
        await js.publish(`${ns}.events.test`, new TextEncoder().encode("after"));
        // Well inside the 30 s after which nats.js would only ask again for the missing consumer.
        await eventually(async () => handled.includes("after"), 10_000);
        assert.equal((await jsm.consumers.info(stream, "d")).config.durable_name, "d");
      } finally {
        await consumer.stop();
      }
    });
  });

  it("takes a message after a quiet spell at once, and gathers a steady stream into batches gatherMs apart", async () => {
    const gatherMs = 1000;
    await withNamespace("natsgather", async ({ ns, stream, nc, log, link }) => {
      const js = jetstream(nc);
      const batches: { at: number; bodies: string[] }[] = [];
      const consumer = consumeBatches(
        link,
        { stream, durable: "gather", filterSubject: `${ns}.events.>` },
        log,
        async (msgs) => {
          batches.push({ at: Date.now(), bodies: msgs.map((m) => m.string()) });
        },
        { gatherMs },
      );
      try {
        const publishedAt = Date.now();
        await js.publish(`${ns}.events.test`, new TextEncoder().encode("first"));
        await eventually(async () => batches.length === 1, 10_000, 5);
        assert.ok(
          batches[0].at - publishedAt < gatherMs,
          `the first waited ${batches[0].at - publishedAt} ms`,
        );
        // A steady stream: one message every 10 ms (without gathering, a batch each). The spacing
        // is the input under test, not a wait for something to happen: published at once, the 40
        // would form one batch with or without gathering.
        const streamStart = Date.now();
        for (let i = 0; i < 40; i++) {
          await js.publish(`${ns}.events.test`, new TextEncoder().encode(String(i)));
          await new Promise((r) => setTimeout(r, 10));
        }
        const streamMs = Date.now() - streamStart;
        await eventually(async () => batches.flatMap((b) => b.bodies).length === 41, 10_000);
        assert.deepEqual(
          batches.flatMap((b) => b.bodies),
          ["first", ...Array.from({ length: 40 }, (_, i) => String(i))],
        );
        for (let i = 1; i < batches.length; i++)
          assert.ok(batches[i].at - batches[i - 1].at >= gatherMs - 1, `batches ${i - 1} and ${i} apart`);
        assert.ok(batches.length <= 2 + Math.ceil(streamMs / gatherMs), `${batches.length} batches`);
      } finally {
        await consumer.stop();
      }
    });
  });
});
