import { JobFailure, type Step } from "./backups.ts";
import type { Progress } from "./state.ts";

export const POWER_TIMEOUT_S = 30;

/**
 * LXD's answer when its clean shutdown of a container did not stop it ("Failed shutting down
 * instance, status is "Running": shutting down the container failed"). LXD 5.0 does not force the
 * stop when the timeout runs out: the operation fails and the system keeps running (checked
 * against LXD 5.0.2 with a container whose init ignores the halt signal, 2026-12-01).
 */
export const SHUTDOWN_FAILED = /shutting down the container failed/i;

/** Before this a failed clean shutdown is liblxc giving up, after it the system refusing to stop. */
export const SHUTDOWN_EARLY_MS = (POWER_TIMEOUT_S * 1000) / 2;

/**
 * Whether a clean shutdown failed at its timeout (`tookMs` after it was asked for): the system
 * would not stop. Long before the timeout the same message is liblxc giving up at once
 * (transient.ts, `shutdownFailedEarly`).
 */
export const shutdownTimedOut = (message: string, tookMs: number) =>
  SHUTDOWN_FAILED.test(message) && tookMs >= SHUTDOWN_EARLY_MS;

/**
 * A power action: LXD's state change, skipped when the instance is already where it should be.
 * A stop or shutdown is clean first and forced when the system did not stop within the grace
 * window (`POWER_TIMEOUT_S`), as the API promises; so is a reboot (restart): the API has no
 * forced restart, and a machine that ignores the request to stop is the one that needs it most.
 */
export function powerStep(
  action: string,
  name: string,
  status: () => Promise<string | undefined>,
  state: (action: string, force?: boolean, timeout?: number) => Promise<string>,
  p: Progress,
): Step {
  // A clean step that ran out of time runs again, forced.
  const forceWhenTimedOut = async (err: string) => {
    if (p.forced || !shutdownTimedOut(err, Date.now() - (p.op_at ?? 0))) return false;
    p.forced = true;
    return true;
  };
  return {
    name: action,
    retry: ["stop", "shutdown", "reboot", "restart"].includes(action) ? forceWhenTimedOut : undefined,
    async act() {
      const s = await status();
      if (!s) throw new JobFailure(`The machine's container ${name} no longer exists`);
      switch (action) {
        case "start":
          return s === "Running" ? undefined : state("start");
        case "stop":
        case "shutdown":
          // A clean shutdown first; forced once it ran out of time (retry above).
          return s === "Stopped" ? undefined : state("stop", Boolean(p.forced), POWER_TIMEOUT_S);
        case "poweroff":
          return s === "Stopped" ? undefined : state("stop", true);
        case "reboot":
        case "restart":
          return s === "Running" ? state("restart", Boolean(p.forced), POWER_TIMEOUT_S) : state("start");
        default:
          throw new JobFailure(`The lxd provider has no power action ${action}`);
      }
    },
  };
}

/**
 * A suspension's stop: a clean shutdown first; if the system does not stop within the grace
 * window, a forced stop: a suspended customer must not keep a running machine.
 */
export function suspendStep(
  name: string,
  status: () => Promise<string | undefined>,
  state: (action: string, force?: boolean, timeout?: number) => Promise<string>,
  p: Progress,
): Step {
  return {
    name: "suspend",
    async act() {
      const s = await status();
      if (!s) throw new JobFailure(`The machine's container ${name} no longer exists`);
      return s === "Stopped" ? undefined : state("stop", Boolean(p.forced), POWER_TIMEOUT_S);
    },
    done: async () => (await status()) === "Stopped",
    async retry() {
      if (p.forced) return false;
      p.forced = true;
      return true;
    },
  };
}
