import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * One full garbage collection a few seconds after a service starts serving. Start-up (loading the
 * modules, building the routes, schemas and validators) leaves garbage in the old generation that
 * V8 had not given back 20 s later: measured with scripts/bench/idle-memory.ts, the idle gateway
 * was 131–148 MB without it and 114–116 MB with it (docs/benchmarks.md). Once only: under load
 * V8's own collections keep the heap in check, and a forced one would only add a pause.
 *
 * `gc` is exposed only to a fresh context made for it, so the services' own code never sees a
 * global `gc`.
 */
export function collectStartupGarbage(delayMs = 3_000): NodeJS.Timeout {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  // A process that stops sooner is not kept alive for it.
  return setTimeout(gc, delayMs).unref();
}
