import type { GetProvisionStatusResponse } from "@hb/contracts/hb/compute/v1/compute_pb";
import { PowerState, type PowerStatus } from "@hb/contracts/hb/compute/v1/machines_pb";
import type { z } from "zod";
import type { powerStatus, provisionStatus } from "../wire/machine.ts";
import { instanceStates, jobStatuses } from "./compute-wire.ts";

/** GET /dedicated/{id}/power-status. */
export function powerStatusJson(p: PowerStatus): z.infer<typeof powerStatus> {
  return {
    state: p.state === undefined ? "absent" : instanceStates.name(p.state),
    power: p.power === PowerState.ON ? "on" : "off",
  };
}

/** GET /dedicated/{id}/provision-status: the state and the latest build or reinstall. */
export function provisionStatusJson(p: GetProvisionStatusResponse): z.infer<typeof provisionStatus> {
  const job = p.job;
  if (!job) return { state: instanceStates.name(p.state), job: null };
  const { action } = job;
  if (action !== "build" && action !== "reinstall")
    throw new Error(`compute sent a ${action} job as the provisioning job`);
  return {
    state: instanceStates.name(p.state),
    job: { action, status: jobStatuses.name(job.status), progress: job.progress },
  };
}
