import { flushCompileCache } from "node:module";
import type { Logger } from "./log.ts";
import { collectStartupGarbage } from "./startup-garbage.ts";

/**
 * Runs the steps in order on SIGTERM or SIGINT (stop accepting, finish in-flight work, drain NATS,
 * end the pools), then exits. A second signal exits at once.
 */
export function onShutdown(log: Logger, steps: Array<[string, () => Promise<unknown> | unknown]>): void {
  let stopping = false;
  const run = async (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info("shutting down", { signal });
    for (const [name, step] of steps) {
      const started = performance.now();
      try {
        await step();
        log.debug("shutdown step done", { step: name, ms: Math.round(performance.now() - started) });
      } catch (err) {
        log.warn("shutdown step failed", { step: name, err });
      }
    }
    process.exit(0);
  };
  process.on("SIGTERM", () => void run("SIGTERM"));
  process.on("SIGINT", () => void run("SIGINT"));
}

/**
 * Entry-point wrapper: a start-up failure is logged and exits non-zero. Once `main` has resolved
 * the service is serving, and start-up's leftovers are dealt with here for every service.
 */
export function runMain(log: Logger, main: () => Promise<void>): void {
  main().then(
    () => {
      // Everything the service loads at start-up is loaded now: its compiled form is written to the
      // compile cache here rather than at a normal exit, which a killed process never reaches (the
      // next start then strips TypeScript again: +16 MB RSS, docs/benchmarks.md).
      flushCompileCache();
      // Start-up's garbage handed back once (docs/benchmarks.md, idle memory).
      collectStartupGarbage();
    },
    (err: unknown) => {
      log.error("start-up failed", { err });
      process.exit(1);
    },
  );
}
