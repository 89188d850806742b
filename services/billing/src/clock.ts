import { AsyncLocalStorage } from "node:async_hooks";
import type { Logger, Sql } from "@hb/platform";

/**
 * Billing's notion of "now". Every rule that depends on time (due dates, proration, hourly
 * charges, end-of-term cancellations) reads it from here, never from the database's clock, so a
 * test can move billing forward in time without editing rows or sleeping. Moving it is possible
 * only when the process was started with BILLING_CLOCK_CONTROL=true (tests and `npm start`; a
 * test switch, refused with NODE_ENV=production); in production the offset stays zero.
 *
 * The offset is kept in billing's database (clock_offset), not only in this process: documents,
 * due dates and ledger entries written at the moved time stay in the past after a restart, and a
 * second replica reads the same time (it takes the stored offset at every due pass).
 */

let offsetMs = 0;
let controllable = false;
// The instant a catch-up step of the due pass stands at (due.ts): everything that step does
// (documents, payments, suspensions) happens at the time it was due, not when the pass ran.
const standing = new AsyncLocalStorage<Date>();

export const clock = {
  now: (): Date => {
    const at = standing.getStore();
    return at ? new Date(at.getTime()) : new Date(Date.now() + offsetMs);
  },
  /** Runs `work` with billing's "now" read as `at` (never later than the real now). */
  at: <T>(at: Date, work: () => Promise<T>): Promise<T> => standing.run(at, work),
};

async function storedOffset(sql: Sql): Promise<number> {
  const [row] = await sql<{ ms: string }[]>`select offset_ms::text as ms from clock_offset`;
  return Number(row?.ms ?? 0);
}

/** At start-up, after the migrations: takes the stored offset when clock control is on. */
export async function startClock(sql: Sql, control: boolean, log: Logger): Promise<void> {
  controllable = control;
  const stored = await storedOffset(sql);
  if (control) {
    offsetMs = stored;
    if (stored > 0) log.info("billing's clock runs ahead of the real time", { offsetSeconds: stored / 1000 });
  } else if (stored > 0) {
    // Without the switch billing keeps the real time, earlier than what was written at the moved one.
    log.warn(
      "billing's clock was moved forward in this database; without BILLING_CLOCK_CONTROL it is ignored",
      {
        offsetSeconds: stored / 1000,
      },
    );
  }
}

export const clockControllable = () => controllable;

/** Takes the offset another replica may have moved it to (the clock never moves back). */
export async function syncClock(sql: Sql): Promise<void> {
  if (!controllable) return;
  offsetMs = Math.max(offsetMs, await storedOffset(sql));
}

/** Moves the clock forward (never back, so due dates already passed stay passed) and stores it. */
export async function advanceClock(sql: Sql, ms: number): Promise<Date> {
  if (!controllable) throw new Error("clock control is disabled");
  if (!Number.isSafeInteger(ms) || ms < 0) throw new Error("the clock only moves forward");
  const [row] = await sql<{ ms: string }[]>`
    update clock_offset set offset_ms = offset_ms + ${ms} returning offset_ms::text as ms`;
  offsetMs = Math.max(offsetMs, Number(row?.ms ?? 0));
  return clock.now();
}
