import type { AdminCreateMachineRequest, ProvisionRequest } from "@hb/contracts/hb/compute/v1/compute_pb";
import type { ConsoleSize, MachineConsole } from "./console/types.ts";
import type { IpRow, MachineRow } from "./machines.ts";

/** A job as a driver sees it. `claim` identifies the worker that may record its outcome. */
export interface JobRow {
  id: string;
  service_id: string;
  customer_id: string;
  action: string;
  target_state: string;
  copy_id: string | null;
  claim: string;
  /** The driver's progress on this job (jobs.driver_state), kept across calls and restarts. */
  driver_state?: DriverState;
  /**
   * A password the job sets (password reset, reinstall): handed to `start` in memory only, never
   * stored, so a job resumed after a restart does not have it.
   */
  secret?: string;
}

/** What a provider reports for a job; compute applies it to the machine, the job and the outbox. */
export type JobOutcome =
  | {
      ok: true;
      /** the instance.state to record */
      state?: string;
      /** the machine was (re)built */
      built?: boolean;
      /** its addresses, recorded on a (re)build */
      addresses?: IpRow[];
      /** merged into the machine's driver state (where a driver placed it, say) */
      driverState?: DriverState;
      /** the host port forwarded to the machine's SSH port, recorded on a (re)build */
      sshPort?: number;
      /** the rebuild removed the machine's snapshots at the provider: they leave its list */
      snapshotsLost?: boolean;
      /** the size of the copy a snapshot_create or backup_create made, whole GB rounded up */
      copySizeGb?: number;
    }
  | {
      ok: false;
      code: string;
      message: string;
      /** the instance is gone (failed build or rebuild) */
      destroyed?: boolean;
      /**
       * the instance is gone and this job did not remove it (deleted behind the platform's back):
       * the machine is lost, and only a rebuild is taken (compute answers 409 CONFLICT)
       */
      lost?: boolean;
    };

/** Figures for GET /vps/{id}/stats and the traffic view; compute adds the instance state. */
export interface MachineStats {
  cpu: { vcpus: number; usage_percent: number };
  memory: { total_mb: number; used_mb: number };
  disk: { total_gb: number; used_gb: number };
  network: { rx_bytes: number; tx_bytes: number };
}

/** The game-server part of GET /services/{id}/game; compute adds state and address. */
export interface GameDetail {
  game: string;
  players: { online: number; max: number };
}

/** What a provider's hosts can hold for machines, for the capacity rule (capacity.ts). */
export interface HostCapacity {
  /** the memory machines' plans may add up to, MB */
  memoryMb: number;
  /** the root disks machines' plans may add up to, GB (Infinity: no bound known) */
  diskGb: number;
  /** why no machine can be placed now at all (no host answers, every disk short of space) */
  full?: string;
}

/** The driver's own per-machine state (machines.driver_state); compute stores it and never reads it. */
export type DriverState = Record<string, unknown>;

/** The request that creates a machine, handed to the driver as received. */
export type NewMachineRequest = ProvisionRequest | AdminCreateMachineRequest;

/**
 * One provider backend; the machine row's `provider` column picks it. Compute never calls a driver
 * with a transaction open: it accepts a job (short transaction), calls the driver, and records the
 * outcome (short transaction). See docs/providers.md.
 */
export interface ProviderDriver {
  readonly name: string;
  /**
   * Its state for a machine about to be created from this request. Synchronous and computed from
   * the request alone: it runs inside the transaction that inserts the machine, so it must not
   * reach the provider (the build's `start` does that).
   */
  initialState(req: NewMachineRequest): DriverState;
  /** How long after accepting a job to first ask `run` about it. */
  firstCheckMs(action: string): number;
  /**
   * Starts the provider's task for a job just accepted. Answers the outcome when the provider
   * settles it at once (a refusal fails the job and the call with 424 PROVIDER_ERROR), or
   * undefined while the task runs on.
   */
  start(job: JobRow, m: MachineRow): Promise<JobOutcome | undefined>;
  /**
   * Checks on a due job: its outcome, or undefined while the provider's task is still running (asked
   * again after `recheckMs`). Must also cope with a job whose `start` never ran (a crash in between).
   */
  run(job: JobRow, m: MachineRow): Promise<JobOutcome | undefined>;
  /**
   * How soon to ask `run` again about a job it answered undefined for, from the progress it kept
   * (job.driver_state); absent: a second (RECHECK_MS).
   */
  recheckMs?(job: JobRow): number;
  stats(m: MachineRow): Promise<MachineStats>;
  game(m: MachineRow): Promise<GameDetail>;
  /**
   * What its hosts can hold (memory, disk), read outside any transaction; a driver without it
   * sets no bound beyond compute's configured maximum of machines.
   */
  capacity?(): Promise<HostCapacity>;
  /** Removes a deleted snapshot or backup from the provider, where it keeps one (best effort). */
  forgetCopy?(m: MachineRow, collection: string, copyId: string): Promise<void>;
  /** Opens a running machine's console (console/consoles.ts relays it); absent: it has none. */
  console?(m: MachineRow, size: ConsoleSize): Promise<MachineConsole>;
}

export type Drivers = Record<string, ProviderDriver>;

export const noDriver = (provider: string): JobOutcome => ({
  ok: false,
  code: "PROVIDER_ERROR",
  message: `No driver for provider ${provider}`,
});
