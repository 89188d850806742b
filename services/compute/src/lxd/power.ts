import { JobFailure, type Step } from "./backups.ts";
import type { Progress } from "./state.ts";

export const POWER_TIMEOUT_S = 30;

/** A power action: LXD's state change, skipped when the instance is already where it should be. */
export function powerStep(
  action: string,
  name: string,
  status: () => Promise<string | undefined>,
  state: (action: string, force?: boolean, timeout?: number) => Promise<string>,
): Step {
  return {
    name: action,
    async act() {
      const s = await status();
      if (!s) throw new JobFailure(`The machine's container ${name} no longer exists`);
      switch (action) {
        case "start":
          return s === "Running" ? undefined : state("start");
        case "stop":
        case "shutdown":
          // A clean shutdown first; the forced stop comes when the grace window ends (LXD's timeout).
          return s === "Stopped" ? undefined : state("stop", false, POWER_TIMEOUT_S);
        case "poweroff":
          return s === "Stopped" ? undefined : state("stop", true);
        case "reboot":
        case "restart":
          return s === "Running" ? state("restart", false, POWER_TIMEOUT_S) : state("start");
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
