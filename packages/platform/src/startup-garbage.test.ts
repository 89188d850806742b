import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getHeapStatistics } from "node:v8";
import { eventually } from "../../../test/support/eventually.ts";
import { collectStartupGarbage } from "./startup-garbage.ts";

const heapUsedMb = () => getHeapStatistics().used_heap_size / 1e6;

describe("collectStartupGarbage", () => {
  it("frees the old generation's garbage after the delay, without a global gc for the process's code", async () => {
    // About 16 MB of arrays too large for the young generation: they sit in the old one until a
    // full collection, which an idle process of this size does not run by itself in seconds.
    let garbage: number[][] | undefined = Array.from({ length: 20 }, () => new Array(100_000).fill(1));
    const withGarbage = heapUsedMb();
    assert.ok(garbage.length === 20);
    garbage = undefined;
    collectStartupGarbage(10);
    const freed = await eventually(async () => {
      const drop = withGarbage - heapUsedMb();
      return drop > 10 ? drop : undefined;
    }, 3_000);
    assert.ok(freed > 10, `${freed} MB freed`);
    assert.equal((globalThis as { gc?: unknown }).gc, undefined);
  });
});
