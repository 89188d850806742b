import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { wakeablePause } from "./wakeable-pause.ts";

/**
 * Whether a pause has ended, after the timers due by now ran. The timers are node:test's mock ones,
 * so the checks are about the pause's rule, not the machine's clock (a real 60 ms timer can end
 * 20 ms early by performance.now() on a loaded host: libuv starts it from a stale loop time).
 */
const ended = async (p: Promise<boolean>) => {
  let done = false;
  void p.then(() => {
    done = true;
  });
  await new Promise<void>((resolve) => setImmediate(resolve));
  return done;
};

describe("wakeablePause", () => {
  it("waits the whole pause when nothing wakes it", async (t) => {
    t.mock.timers.enable({ apis: ["setTimeout"] });
    const p = wakeablePause().pause(60);
    t.mock.timers.tick(59);
    assert.equal(await ended(p), false);
    t.mock.timers.tick(1);
    assert.equal(await ended(p), true);
    assert.equal(await p, false, "it ran out: not woken");
  });

  it("ends a pause when woken during it", async (t) => {
    t.mock.timers.enable({ apis: ["setTimeout"] });
    const p = wakeablePause();
    const paused = p.pause(60_000);
    t.mock.timers.tick(10);
    assert.equal(await ended(paused), false);
    p.wake();
    assert.equal(await ended(paused), true);
    assert.equal(await paused, true, "woken");
  });

  it("keeps a wake that came between pauses: the next pause ends at once, the one after waits", async (t) => {
    t.mock.timers.enable({ apis: ["setTimeout"] });
    const p = wakeablePause();
    p.wake(); // during a pass
    const first = p.pause(60_000);
    t.mock.timers.tick(0);
    assert.equal(await ended(first), true);
    assert.equal(await first, true, "the kept wake counts as woken");
    const second = p.pause(60);
    t.mock.timers.tick(59);
    assert.equal(await ended(second), false);
    t.mock.timers.tick(1);
    assert.equal(await ended(second), true);
    assert.equal(await second, false);
  });
});
