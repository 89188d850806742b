/**
 * Deadlines of attempts in flight, kept on one timer. `AbortSignal.timeout` per attempt cost
 * about a seventh of an attempt's CPU (docs/benchmarks.md, "Issue 31 §3, 2026-11-30 (midday)"):
 * its timer outlives the attempt for the whole deadline (30 s by default), so at 3,000 attempts a
 * second about 90,000 were pending, each with the weak reference that lets it be collected. Here an
 * attempt that settles leaves the set at once, and one sweep every SWEEP_MS ends the late ones.
 */

/** How late a deadline may be noticed; small beside the smallest deadline allowed (100 ms). */
export const SWEEP_MS = 25;

interface Watched {
  at: number;
  ms: number;
  late: (reason: Error) => void;
}

const watched = new Set<Watched>();
/** Whether a sweep is scheduled (one at a time, only while a deadline is watched). */
let sweeping = false;

function sweep() {
  const now = Date.now();
  for (const w of watched) {
    if (w.at > now) continue;
    watched.delete(w);
    // The reason AbortSignal.timeout gives, so a deadline is told from other failures alike.
    w.late(new DOMException(`No answer within ${w.ms} ms`, "TimeoutError"));
  }
  sweeping = watched.size > 0;
  if (sweeping) setTimeout(sweep, SWEEP_MS).unref();
}

/**
 * Calls `late` with a TimeoutError once `ms` have passed, unless the returned `settled` was called
 * first. The sweep's timer is unreferenced: the attempt's own socket keeps the process alive.
 */
export function watchDeadline(ms: number, late: (reason: Error) => void): () => void {
  const w: Watched = { at: Date.now() + ms, ms, late };
  watched.add(w);
  if (!sweeping) {
    sweeping = true;
    setTimeout(sweep, SWEEP_MS).unref();
  }
  return () => watched.delete(w);
}

/** Deadlines being watched now (for tests: none is left once its attempt settled). */
export const watchedDeadlines = () => watched.size;
