import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { byteQueue } from "./types.ts";

const drain = async (q: ReturnType<typeof byteQueue>) => {
  const got: Uint8Array[] = [];
  for await (const chunk of q.iterable) got.push(chunk);
  return got;
};

describe("a console's output queue", () => {
  it("hands the reader every chunk pushed before the end, in order, however pushes and reads interleave", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 8 }), fc.boolean()), { maxLength: 30 }),
        async (steps) => {
          const q = byteQueue();
          const reading = drain(q);
          for (const [chunk, yieldFirst] of steps) {
            // Some pushes wait for the reader to run first, some come in a burst.
            if (yieldFirst) await new Promise((r) => setImmediate(r));
            q.push(chunk);
          }
          q.end();
          q.push(new Uint8Array([255])); // after the end: dropped
          assert.deepEqual(
            await reading,
            steps.map(([chunk]) => chunk),
          );
        },
      ),
      { numRuns: 100 },
    );
  });
});
