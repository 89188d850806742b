import assert from "node:assert/strict";
import { test } from "node:test";
import { oneAtATimePerKey } from "./one-at-a-time.ts";

test("tasks of one key never overlap, and a failed task does not stop the next", async () => {
  const run = oneAtATimePerKey();
  let running = 0;
  let most = 0;
  const order: number[] = [];
  const task = (i: number) => async () => {
    running += 1;
    most = Math.max(most, running);
    await new Promise((r) => setImmediate(r));
    order.push(i);
    running -= 1;
    if (i === 2) throw new Error("task 2 failed");
    return i;
  };
  const results = await Promise.allSettled([1, 2, 3, 4].map((i) => run("host-a", task(i))));
  assert.equal(most, 1);
  assert.deepEqual(order, [1, 2, 3, 4]);
  assert.deepEqual(
    results.map((r) => r.status),
    ["fulfilled", "rejected", "fulfilled", "fulfilled"],
  );
});

test("tasks of different keys run side by side", async () => {
  const run = oneAtATimePerKey();
  let release: () => void = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  const first = run("host-a", () => held);
  // host-b's task ends while host-a's is still held.
  assert.equal(await run("host-b", async () => "b"), "b");
  release();
  await first;
});
