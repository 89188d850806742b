import { createHash } from "node:crypto";
import { simulatedConsole } from "./console/simulated.ts";
import type { JobOutcome, JobRow, ProviderDriver } from "./driver.ts";
import { addressesFor, type MachineRow } from "./machines.ts";

export interface SimulatorConfig {
  buildMs: number;
  actionMs: number;
  reinstallMs: number;
  /**
   * Whether a hostname with "fail" as one of its words fails its build: failure injection for
   * tests (SIM_FAILURES=1, which the test stack sets). Off otherwise, so that no customer's
   * hostname changes how a machine is built.
   */
  failureInjection?: boolean;
}

/**
 * The simulator's failure injection, kept in machines.driver_state: `fail_build` fails every
 * (re)build, `controller_fails` makes the management controller refuse power actions.
 */
type SimulatorState = {
  fail_build?: boolean;
  controller_fails?: boolean;
};

/** The disk the simulated machine uses, GB: steady per machine, as a copy of it measures it. */
const usedDiskGb = (m: MachineRow) =>
  Math.floor((m.disk_gb * createHash("sha256").update(m.service_id).digest()[2]) / 510);

const sinceCreatedS = (m: MachineRow) => Math.max(0, (Date.now() - m.created_at.getTime()) / 1000);

/** With failure injection on, a hostname with "fail" as one of its words (web-fail-1, fail-over-1) fails its build. */
const FAIL_HOSTNAME = /(^|[.-])fail([.-]|$)/;

export const BUILD_FAILED: JobOutcome = {
  ok: false,
  code: "BUILD_FAILED",
  message: "The hypervisor could not build the machine",
  destroyed: true,
};

export const CONTROLLER_FAILED: JobOutcome = {
  ok: false,
  code: "PROVIDER_ERROR",
  message: "The server's management controller did not complete the power action",
};

const REBUILDS = new Set(["reinstall", "snapshot_revert", "backup_restore"]);
const isPowerAction = (job: JobRow) =>
  !job.copy_id && !["build", "reinstall", "password"].includes(job.action);
const stateOf = (m: MachineRow) => m.driver_state as SimulatorState;

/**
 * The default backend: jobs finish when due and every build succeeds, except where the machine's
 * simulator state (set from the hostname or by the admin command) says otherwise.
 */
export function createSimulatorDriver(cfg: SimulatorConfig): ProviderDriver {
  const driver: ProviderDriver = {
    name: "simulator",
    initialState(req): SimulatorState {
      if (req.$typeName === "hb.compute.v1.AdminCreateMachineRequest") {
        return { fail_build: req.failBuild, controller_fails: req.controllerFails };
      }
      return {
        fail_build: Boolean(cfg.failureInjection) && FAIL_HOSTNAME.test(req.hostname),
        controller_fails: false,
      };
    },
    firstCheckMs(action) {
      if (action === "build") return cfg.buildMs;
      return REBUILDS.has(action) ? cfg.reinstallMs : cfg.actionMs;
    },
    async start(job, m) {
      if (isPowerAction(job) && stateOf(m).controller_fails) return CONTROLLER_FAILED;
      // With no duration to wait for, the action completes in the call that asked for it.
      return driver.firstCheckMs(job.action) === 0 ? driver.run(job, m) : undefined;
    },
    async run(job, m) {
      if (job.action === "build" || job.action === "reinstall") {
        return stateOf(m).fail_build
          ? BUILD_FAILED
          : { ok: true, state: "running", built: true, addresses: addressesFor(m.service_id) };
      }
      if (job.action === "password") return { ok: true };
      if (job.action.endsWith("_create")) return { ok: true, copySizeGb: Math.max(1, usedDiskGb(m)) };
      return { ok: true, state: job.target_state };
    },
    async stats(m) {
      const id = createHash("sha256").update(m.service_id).digest();
      const h = createHash("sha256")
        .update(m.service_id + new Date().toISOString().slice(0, 16))
        .digest();
      return {
        cpu: { vcpus: m.vcpus, usage_percent: m.state === "running" ? h[0] % 100 : 0 },
        memory: {
          total_mb: m.memory_mb,
          used_mb: m.state === "running" ? Math.floor((m.memory_mb * h[1]) / 255) : 0,
        },
        disk: { total_gb: m.disk_gb, used_gb: Math.floor((m.disk_gb * h[2]) / 510) },
        // Counters only grow, as an interface's do: a steady rate of its own per machine since it
        // was created, so the usage history's rates (the difference of two readings) mean something.
        network: {
          rx_bytes: Math.floor(sinceCreatedS(m) * (20_000 + id[0] * 2_000)),
          tx_bytes: Math.floor(sinceCreatedS(m) * (5_000 + id[1] * 500)),
        },
      };
    },
    async game() {
      return { game: "minecraft", players: { online: 0, max: 20 } };
    },
    console: async (m, size) => simulatedConsole(m, size),
  };
  return driver;
}
