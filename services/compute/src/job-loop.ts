/**
 * The job loop of jobs.ts (startLoop) and its pace: it ticks often while a job this replica
 * accepted or claimed is near (expectJob), and once a second otherwise.
 */
import { type Logger, wakeablePause } from "@hb/platform";

/** How soon a job the provider is still working on is asked about again. */
export const RECHECK_MS = 1000;
/** How long past a job's expected check the loop keeps looking often (its commit, a slow driver). */
const BUSY_AFTER_DUE_MS = 2000;

/** The loop around `tick` (one pass; answers how many jobs it claimed), and when to look often. */
export function jobLoop(tick: () => Promise<number>) {
  /** Until when (ms since the epoch) the loop keeps its short tick: a job of this replica is near. */
  let busyUntil = 0;
  const expectJob = (inMs: number) => {
    busyUntil = Math.max(busyUntil, Date.now() + inMs + BUSY_AFTER_DUE_MS);
  };

  /**
   * The job loop: finishes due jobs through each machine's provider driver. State lives in the
   * database, so a restart resumes where it stopped and several replicas can run it. It looks every
   * `tickMs` while this replica has work in hand or a job of its own falls due, and every `idleMs`
   * otherwise: that finds jobs other replicas left, or made due by hand, within a second, without
   * a claim statement ten times a second on an idle machine (issue 13: most of compute's idle CPU).
   */
  function startLoop(log: Logger, tickMs = 100, idleMs = 1000) {
    let stopped = false;
    const idle = wakeablePause();
    const loop = (async () => {
      while (!stopped) {
        let claimed = 0;
        try {
          claimed = await tick();
        } catch (err) {
          log.warn("job loop tick failed", { err });
        }
        if (claimed > 0) expectJob(RECHECK_MS);
        const wait = Date.now() < busyUntil ? tickMs : idleMs;
        await idle.pause(wait);
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        idle.wake();
        await loop;
      },
    };
  }

  return { expectJob, startLoop };
}
