import type { PowerActionResult } from "@hb/contracts/hb/compute/v1/actions_pb";
import type {
  DispatchActionResponse,
  ReinstallResponse,
  ResetPasswordResponse,
} from "@hb/contracts/hb/compute/v1/compute_pb";
import type { z } from "zod";
import type {
  dispatchResult,
  passwordResult,
  pendingResult,
  powerResult,
  reinstallResult,
} from "../wire/machine-action.ts";
import { instanceStates } from "./compute-wire.ts";
import { machineStatsJson } from "./machine-stats.ts";

/** Accepted and still running: the job to poll. */
export const pendingJson = (jobId: string): z.infer<typeof pendingResult> => ({
  completed: false,
  job_id: jobId,
  pending: true,
});

/** A power action: completed with the state reached, or accepted and still running. */
export function powerResultJson(r: PowerActionResult | undefined): z.infer<typeof powerResult> {
  if (!r) throw new Error("compute answered a power action without its result");
  if (r.reachedState === undefined) return pendingJson(r.jobId);
  return {
    completed: true,
    job_id: r.jobId,
    state: instanceStates.name(r.reachedState),
    status: "succeeded",
  };
}

/** POST /services/{id}/actions/{action}: a power action, or the `status` and `stats` reads. */
export function dispatchResultJson(r: DispatchActionResponse): z.infer<typeof dispatchResult> {
  switch (r.result.case) {
    case "power":
      return powerResultJson(r.result.value);
    case "state": {
      const state = instanceStates.name(r.result.value);
      return { completed: true, state, status: state };
    }
    case "stats":
      return machineStatsJson(r.result.value);
    default:
      throw new Error("compute answered the dispatcher without a result");
  }
}

export const reinstallResultJson = (r: ReinstallResponse): z.infer<typeof reinstallResult> => ({
  ...pendingJson(r.jobId),
  message: "Reinstall started; the disk is being erased",
});

/** A rebuilt dedicated server's generated password is shown in this answer only. */
export const passwordResultJson = (r: ResetPasswordResponse): z.infer<typeof passwordResult> => ({
  ...pendingJson(r.jobId),
  ...(r.generatedPassword === undefined ? {} : { password: r.generatedPassword }),
});
