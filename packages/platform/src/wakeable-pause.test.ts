import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { wakeablePause } from "./wakeable-pause.ts";

const timed = async (p: Promise<void>) => {
  const start = performance.now();
  await p;
  return performance.now() - start;
};

describe("wakeablePause", () => {
  it("waits the whole pause when nothing wakes it", async () => {
    assert.ok((await timed(wakeablePause().pause(60))) >= 55);
  });

  it("ends a pause when woken during it", async () => {
    const p = wakeablePause();
    const paused = timed(p.pause(60_000));
    p.wake();
    assert.ok((await paused) < 1000);
  });

  it("keeps a wake that came between pauses: the next pause ends at once, the one after waits", async () => {
    const p = wakeablePause();
    p.wake(); // during a pass
    assert.ok((await timed(p.pause(60_000))) < 1000);
    assert.ok((await timed(p.pause(60))) >= 55);
  });
});
