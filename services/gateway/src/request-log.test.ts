import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createLogger, type RequestLogRecord } from "@hb/platform";
import { eventually } from "../../../test/support/eventually.ts";
import { createRequestLogPublisher } from "./request-log.ts";

const log = createLogger("test");
log.warn = () => {};
const entry = (n: number) => ({ keyId: `k${n}` }) as unknown as RequestLogRecord;
const until = (check: () => boolean) => eventually(async () => check(), 5_000, 5);

describe("request log publisher", () => {
  it("keeps entries while publishing fails and sends them all, in order, once it works again", async () => {
    let up = false;
    const sent: number[] = [];
    const publisher = createRequestLogPublisher(
      async (payload) => {
        if (!up) throw Object.assign(new Error("closed"), { name: "ClosedConnectionError" });
        for (const r of JSON.parse(new TextDecoder().decode(payload)) as { keyId: string }[])
          sent.push(Number(r.keyId.slice(1)));
      },
      log,
      { intervalMs: 1, maxBatch: 7, retryMs: 5, maxRetryMs: 20 },
    );
    for (let i = 0; i < 50; i++) publisher.publish(entry(i));
    await until(() => publisher.pending() === 50);
    up = true;
    await until(() => publisher.pending() === 0);
    assert.deepEqual(sent, [...Array(50).keys()]);
    assert.equal(publisher.dropped(), 0);
  });

  it("holds at most maxPending entries, dropping the oldest and counting them", async () => {
    const publisher = createRequestLogPublisher(
      async () => {
        throw new Error("down");
      },
      log,
      { intervalMs: 1, maxPending: 10, retryMs: 1000 },
    );
    for (let i = 0; i < 25; i++) publisher.publish(entry(i));
    assert.equal(publisher.pending(), 10);
    assert.equal(publisher.dropped(), 15);
  });

  it("publishes a full batch at once and the rest after the interval", async () => {
    const batches: number[] = [];
    const publisher = createRequestLogPublisher(
      async (payload) => {
        batches.push((JSON.parse(new TextDecoder().decode(payload)) as unknown[]).length);
      },
      log,
      { intervalMs: 20, maxBatch: 4 },
    );
    for (let i = 0; i < 6; i++) publisher.publish(entry(i));
    await until(() => publisher.pending() === 0);
    assert.deepEqual(batches, [4, 2]);
    await publisher.flush();
  });

  it("keeps publishing after a drain that found nothing to send", async () => {
    const batches: number[] = [];
    const publisher = createRequestLogPublisher(
      async (payload) => {
        batches.push((JSON.parse(new TextDecoder().decode(payload)) as unknown[]).length);
      },
      log,
      { intervalMs: 5, maxBatch: 2 },
    );
    await publisher.flush(); // a drain with nothing buffered
    publisher.publish(entry(1));
    publisher.publish(entry(2)); // a full batch: goes at once
    await until(() => publisher.pending() === 0);
    publisher.publish(entry(3));
    await until(() => publisher.pending() === 0);
    assert.deepEqual(batches, [2, 1]);
  });
});
