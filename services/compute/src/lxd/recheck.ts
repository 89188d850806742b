import { RECHECK_MS } from "../job-loop.ts";
import type { Progress } from "./state.ts";

/** The soonest a job waiting on an LXD operation is asked about it again. */
export const MIN_RECHECK_MS = 100;

/**
 * How soon to ask LXD again about the operation a job waits on: half as long as it has run so far,
 * from MIN_RECHECK_MS up to RECHECK_MS. A build's start ends in one to two seconds (LXD's proxy
 * device alone waits a second for its helper), and a fixed second found it done up to a second
 * late, the machine ready meanwhile; an operation of minutes (a backup's copy) is asked once a
 * second, as before. A job waiting on no operation (LXD busy, the daemon away) keeps the second.
 */
export function opRecheckMs(p: Progress, now: number): number {
  if (!p.op || p.op_at === undefined) return RECHECK_MS;
  return Math.min(RECHECK_MS, Math.max(MIN_RECHECK_MS, Math.round((now - p.op_at) / 2)));
}
