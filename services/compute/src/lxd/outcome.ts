import type { JobOutcome, JobRow } from "../driver.ts";
import type { IpRow, MachineRow } from "../machines.ts";
import { copySize } from "./backups.ts";
import type { LxdInstanceState } from "./client.ts";
import type { LxdContext } from "./context.ts";
import { instance, instanceName, submitDelete, waitOp } from "./instance.ts";
import { goneOutcome } from "./lost.ts";
import { ipRows } from "./network.ts";
import type { LxdMachineState, Progress } from "./state.ts";

/** The outcome of a job whose steps have all finished. */
export async function finished(d: LxdContext, job: JobRow, m: MachineRow, p: Progress): Promise<JobOutcome> {
  const kept: LxdMachineState = {
    endpoint: p.endpoint,
    member: p.member,
    ssh_port: p.ssh_port,
    ...(p.network ? { network: p.network } : {}),
  };
  switch (job.action) {
    case "build":
    case "reinstall":
    case "backup_restore":
    case "snapshot_revert":
      return {
        ok: true,
        state: "running",
        built: job.action === "build" || job.action === "reinstall",
        addresses: await addressesOf(d, m, p),
        ...(p.endpoint ? { driverState: kept } : {}),
        ...(p.ssh_port ? { sshPort: p.ssh_port } : {}),
        // A reinstall deletes the instance, and its LXD snapshots with it. (A backup restore
        // brings back the snapshots the backup holds.)
        ...(job.action === "reinstall" ? { snapshotsLost: true } : {}),
      };
    case "terminate":
      return { ok: true, state: "stopped" };
    case "password":
      return { ok: true };
    case "snapshot_create":
    case "backup_create": {
      const sizeGb = await copySize(d.copyContext(d.clientOf(d.machineState(m).endpoint), job, m));
      return sizeGb === undefined ? { ok: true } : { ok: true, copySizeGb: sizeGb };
    }
    default:
      return { ok: true, state: job.target_state };
  }
}

/** Its addresses: the one given on its private network, else as LXD reports them, else the proxy's. */
export async function addressesOf(d: LxdContext, m: MachineRow, p: Progress): Promise<IpRow[]> {
  // The address it was given (the guest may not have brought it up yet).
  if (p.network) return ipRows(p.network);
  const c = d.clientOf(p.endpoint ?? d.machineState(m).endpoint);
  const s = await c.get<LxdInstanceState>(`/1.0/instances/${instanceName(m.service_id)}/state`);
  const found: IpRow[] = [];
  for (const [nic, net] of Object.entries(s.network ?? {})) {
    if (nic === "lo") continue;
    for (const a of net.addresses) {
      if (a.scope !== "global") continue;
      found.push({
        address: a.address,
        version: a.family === "inet6" ? 6 : 4,
        prefix_length: Number(a.netmask),
        purpose: found.length === 0 ? "primary" : "additional",
      });
    }
  }
  if (found.length === 0)
    found.push({ address: d.cfg.proxyAddress, version: 4, prefix_length: 32, purpose: "primary" });
  return found;
}

/** A failed job; `gone` when its instance no longer exists (destroyed or lost: lost.ts). */
export const failure = (job: JobRow, m: MachineRow, message: string, gone = false): JobOutcome =>
  job.action === "build"
    ? { ok: false, code: "BUILD_FAILED", message, destroyed: true }
    : { ok: false, code: "PROVIDER_ERROR", message, ...(gone ? goneOutcome(job.action, m) : {}) };

/** Whether LXD says the machine's instance is gone (false when it exists or LXD cannot tell). */
export async function instanceGone(d: LxdContext, m: MachineRow, p: Progress): Promise<boolean> {
  try {
    return !(await instance(
      d.clientOf(p.endpoint ?? d.machineState(m).endpoint),
      instanceName(m.service_id),
    ));
  } catch {
    return false;
  }
}

/** Removes what a failed build left behind, so a retry or a refund leaves nothing running. */
export async function cleanUp(d: LxdContext, m: MachineRow, p: Progress) {
  const c = d.clientOf(p.endpoint);
  const name = instanceName(m.service_id);
  try {
    await waitOp(c, (await submitDelete(c, name)) ?? "");
  } catch {
    // Best effort: the reconcile pass reports what remains.
  }
}
