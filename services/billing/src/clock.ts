/**
 * Billing's notion of "now". Every rule that depends on time (due dates, proration, hourly
 * charges, end-of-term cancellations) reads it from here, never from the database's clock, so a
 * test can move billing forward in time without editing rows or sleeping. Moving it is possible
 * only when the process was started with BILLING_CLOCK_CONTROL=true (tests); in production the
 * offset stays zero.
 */
let offsetMs = 0;
let controllable = false;

export const clock = {
  now: (): Date => new Date(Date.now() + offsetMs),
};

export function enableClockControl(on: boolean) {
  controllable = on;
}

export const clockControllable = () => controllable;

/** Moves the clock forward (never back, so due dates already passed stay passed). */
export function advanceClock(ms: number): Date {
  if (!controllable) throw new Error("clock control is disabled");
  if (!Number.isFinite(ms) || ms < 0) throw new Error("the clock only moves forward");
  offsetMs += ms;
  return clock.now();
}
