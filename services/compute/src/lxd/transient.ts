import { SHUTDOWN_EARLY_MS, SHUTDOWN_FAILED } from "./power.ts";
import type { Progress } from "./state.ts";

/**
 * LXD 5.0 failures of its own helper processes that say nothing of the machine: a file push or a
 * start whose forkfile/forkstart helper was not reachable yet on a busy host (seen in CI: "dial unix
 * /proc/self/fd/273/forkfile.sock: connect: no such file or directory"). The step is done again a few
 * times, a job-loop tick apart, before the job fails. So is a read of the host's own files that
 * LXD 5.0 reports as a bad file descriptor on a loaded host (seen in CI: `GET /1.0/resources`
 * answering "Failed to add card info: bad file descriptor", which failed a build at its placement).
 * And a start whose move of the machine's files to its id range failed on a loaded host ("Failed to
 * handle idmapped storage: Failed to change ownership of …", CI and bench:lxd); a revert restores the
 * snapshot again before its start is done again (build-steps.ts, startAfter).
 */
export const transientLxdFailure = (message: string) =>
  /fork(file|start)\.sock|forkfile|forkstart|bad file descriptor|failed to handle idmapped storage/i.test(
    message,
  );
/**
 * Whether LXD's clean shutdown (a reboot's, a stop's) failed long before its timeout, `tookMs` after
 * the step asked for it. liblxc can give up on a running machine at once: "Failed shutting down
 * instance, status is "Running": shutting down the container failed" 0.6 s into a reboot of a
 * machine that had just answered SSH (CI, 2026-12-01). The step is done again from the machine's
 * state as LXD reports it then. At the timeout the same message means the system would not stop,
 * which another try does not change (the stop or restart is then forced: power.ts, `shutdownTimedOut`).
 */
export const shutdownFailedEarly = (message: string, tookMs: number) =>
  SHUTDOWN_FAILED.test(message) && tookMs < SHUTDOWN_EARLY_MS;

/** How many times such a step is done again before the job fails. */
export const TRANSIENT_RETRIES = 3;

/**
 * Whether LXD refused a request because another operation holds the instance (after a failed start
 * LXD runs a stop of its own: "Failed to create instance delete operation: Instance is busy running
 * a \"stop\" operation", CI). The step is asked again for a while (advance.ts).
 */
export const instanceBusy = (message: string) => /instance is busy running/i.test(message);

/**
 * Whether LXD refused to delete an instance because it runs: a start it reported failed can bring
 * the instance up after a stop found it stopped (bench:lxd, ten at once).
 */
export const instanceRunning = (message: string) => /instance is running/i.test(message);

/** Counts one more try of a job's steps after LXD failed one; false once TRANSIENT_RETRIES were spent. */
export function anotherTry(p: Progress): boolean {
  if ((p.transient_retries ?? 0) >= TRANSIENT_RETRIES) return false;
  p.transient_retries = (p.transient_retries ?? 0) + 1;
  return true;
}
