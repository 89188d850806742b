import { apiError } from "@hb/platform";
import type { HostCapacity, JobRow, ProviderDriver } from "../driver.ts";
import type { MachineRow } from "../machines.ts";
import { advance } from "./advance.ts";
import { removeCopy } from "./backups.ts";
import { openLxdConsole } from "./console.ts";
import { createLxdContext } from "./context.ts";
import type { LxdDriverConfig } from "./driver-config.ts";
import { instanceName } from "./instance.ts";
import { opRecheckMs } from "./recheck.ts";
import type { Progress } from "./state.ts";
import { createStatsReader } from "./stats.ts";

export { MIN_PROCESSES, processLimit, proxyPortTaken } from "./build-steps.ts";
export type { LxdDriverConfig } from "./driver-config.ts";
export { instanceName, LXD_STATES } from "./instance.ts";
export { BTRFS_POOL } from "./placement.ts";
export type { LxdMachineState } from "./state.ts";
export { transientLxdFailure } from "./transient.ts";

/**
 * The `lxd` provider: VPSes as LXD system containers. Every job is a short list of steps (plan.ts); a
 * step that starts an LXD operation leaves the job running with the operation's id remembered in the
 * job row, and the next `run` asks LXD about it (advance.ts). See docs/providers.md.
 */
export function createLxdDriver(cfg: LxdDriverConfig) {
  const d = createLxdContext(cfg);
  /** Passwords of this process's running jobs, by job id (never stored: see JobRow.secret). */
  const secrets = new Map<string, string>();

  async function run(job: JobRow, m: MachineRow) {
    const outcome = await advance(d, job, m, secrets.get(job.id));
    if (outcome) secrets.delete(job.id);
    return outcome;
  }

  const driver: ProviderDriver & {
    /** Removes a deleted snapshot from LXD, or a deleted backup from the backup store. */
    forgetCopy(m: MachineRow, collection: string, copyId: string): Promise<void>;
    capacity(): Promise<HostCapacity>;
  } = {
    name: "lxd",
    initialState: () => ({}),
    firstCheckMs: () => 500,
    recheckMs: (job) => opRecheckMs((job.driver_state ?? {}) as Progress, Date.now()),
    capacity: d.capacity,
    start(job, m) {
      if (job.secret) secrets.set(job.id, job.secret);
      return run(job, m);
    },
    run,
    stats: createStatsReader(d),
    async game() {
      throw apiError("PROVIDER_ERROR", "Game servers are not run by the lxd provider");
    },
    console: (m, size) =>
      openLxdConsole(d.clientOf(d.machineState(m).endpoint), instanceName(m.service_id), size),
    async forgetCopy(m, collection, copyId) {
      await removeCopy(
        d.copyPlace(d.clientOf(d.machineState(m).endpoint), m),
        collection === "snapshot" ? "snapshot" : "backup",
        copyId,
      );
    },
  };
  return driver;
}

export type LxdDriver = ReturnType<typeof createLxdDriver>;
