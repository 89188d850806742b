import { apiError, type Logger, type Sql, wakeablePause, wakeOnNotify } from "@hb/platform";
import { nextDueInstant } from "./catch-up.ts";
import { advanceClock, clock, clockControllable, syncClock } from "./clock.ts";
import { timeOut } from "./contract-values.ts";
import type { BillingHandlers } from "./handlers.ts";
import { chargeDueHours, type DueLock, resumeHourlyServices } from "./hourly.ts";
import { CREDIT_LANDED_CHANNEL, payFromLandedCredit } from "./late-credit.ts";
import { selectServices } from "./records.ts";
import { runRenewalCycle } from "./renewals.ts";
import { setServiceState } from "./service-state.ts";
import { transact } from "./shared.ts";

/**
 * End-of-term cancellations are carried out when the paid term runs out: the service is
 * terminated (service.terminated), nothing is refunded, and it no longer renews. Claimed with SKIP
 * LOCKED so replicas never terminate one service twice.
 */
async function endTermsDue(sql: Sql, ns: string, lock: DueLock = "skip"): Promise<number> {
  return transact(sql, async (tx) => {
    const due = await selectServices(
      tx,
      `s.cancellation is not null and s.status not in ('terminated', 'cancelled') and s.next_due_date <= $1
       order by s.next_due_date limit 100 for update of s${lock === "skip" ? " skip locked" : ""}`,
      [clock.now()],
    );
    for (const s of due) {
      await setServiceState(
        tx,
        ns,
        s,
        "terminate",
        s.cancellation?.reason || "Cancelled at the end of the term",
        "billing",
      );
    }
    return due.length;
  });
}

/** Everything due by billing's "now", run until nothing more is due. */
async function runDueStep(sql: Sql, ns: string, lock: DueLock) {
  while ((await resumeHourlyServices(sql, ns, lock)) > 0) {}
  while ((await chargeDueHours(sql, ns, lock)) > 0) {}
  while ((await endTermsDue(sql, ns, lock)) > 0) {}
  while ((await runRenewalCycle(sql, ns, lock)) > 0) {}
}

/**
 * Walks every instant at which something fell due since the last pass, in time order, each with
 * billing's clock standing at it, then does what is due now. At most `steps` instants
 * (DUE_CATCH_UP_STEPS): a pass that stops there has done everything due up to the last one, in
 * order, and returns false; the next pass starts again from the first instant still due, so a long
 * catch-up is spread over passes and survives a restart.
 */
async function runDueWorkNow(sql: Sql, ns: string, lock: DueLock, steps: number): Promise<boolean> {
  await syncClock(sql);
  const now = clock.now();
  let after = new Date(0);
  for (let step = 0; ; step++) {
    const at = await nextDueInstant(sql, after, now);
    if (!at) break;
    if (step === steps) return false;
    await clock.at(at, () => runDueStep(sql, ns, lock));
    after = at;
  }
  // The pass ends at the "now" it started from, even when the clock moved meanwhile (a pass queued
  // behind this one walks on from there). Credit that landed pays what is open, then the rest.
  await clock.at(now, async () => {
    while ((await payFromLandedCredit(sql, ns)) > 0) {}
    await runDueStep(sql, ns, lock);
  });
  return true;
}

// One pass at a time in this process. A pass that started before the clock moved reads the old
// "now" and holds its rows with SKIP LOCKED, so a second pass beside it would skip them and return
// with work still due; queued behind it, the second pass sees the rows again with the new time.
let tail: Promise<unknown> = Promise.resolve();

function runDueWork(sql: Sql, ns: string, lock: DueLock = "skip", steps = 500): Promise<boolean> {
  const run = tail.then(() => runDueWorkNow(sql, ns, lock, steps));
  tail = run.catch(() => {});
  return run;
}

/**
 * The due pass every `intervalMs`, and at once when credit lands (late-credit.ts): a top-up pays
 * the open renewals without waiting for the next pass.
 */
export function startDueWork(sql: Sql, ns: string, log: Logger, intervalMs: number, steps?: number) {
  let stopped = false;
  const idle = wakeablePause();
  const listener = wakeOnNotify(sql, CREDIT_LANDED_CHANNEL, idle.wake, log);
  const loop = (async () => {
    while (!stopped) {
      await runDueWork(sql, ns, "skip", steps).catch((err: unknown) =>
        log.warn("due work failed, will retry", { err }),
      );
      await idle.pause(intervalMs);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      idle.wake();
      await loop;
      await listener.stop();
    },
  };
}

export function createClockAdmin(sql: Sql, ns: string, steps?: number): BillingHandlers {
  return {
    async adminAdvanceClock(req) {
      if (!clockControllable())
        throw apiError(
          "FORBIDDEN",
          "The billing clock can only be moved when BILLING_CLOCK_CONTROL=true (tests)",
        );
      const seconds = Number(req.seconds);
      if (!Number.isSafeInteger(seconds) || seconds < 0 || seconds > 10 * 366 * 86_400) {
        throw apiError("BAD_REQUEST", "seconds must be from 0 to ten years", {
          violations: [{ field: "seconds", message: "must be from 0 to 316224000" }],
        });
      }
      const now = await advanceClock(sql, seconds * 1000);
      // Waits for rows held elsewhere: the answer means everything due by the new time is done.
      while (!(await runDueWork(sql, ns, "wait", steps))) {}
      return { now: timeOut(now) };
    },
  };
}
