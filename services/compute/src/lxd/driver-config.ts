import type { DriverState, JobRow } from "../driver.ts";
import type { MachineRow } from "../machines.ts";
import type { LxdClient } from "./client.ts";
import type { HostLimits } from "./hosts.ts";
import type { MachineNetwork } from "./network.ts";

export interface LxdDriverConfig {
  /** The daemons (or clusters) machines may be placed on; the first is used when one is not recorded. */
  clients: LxdClient[];
  /** os_image_id to LXD image alias; an id without an entry is used as the alias itself. */
  images: Record<string, string>;
  /** Where the SSH proxy device listens on the LXD host (127.0.0.1 keeps it on loopback). */
  proxyAddress: string;
  /**
   * The pool new root disks go on; empty or absent: BTRFS_POOL where the daemon has it (the
   * plan's disk size is enforced there), else `default`.
   */
  storagePool?: string;
  profiles: string[];
  /** Directory that receives exported backups (the default backup store). */
  backupDir: string;
  /** How long the daemon may stay unreachable during a job before the job fails. */
  unreachableFailMs: number;
  /** How long a snapshot's or backup's job may take (default DEFAULT_COPY_DEADLINE_MS). */
  copyDeadlineMs?: number;
  /** The customer's SSH public keys on file, written to root's authorized_keys on (re)build. */
  sshKeysOf(customerId: string): Promise<string[]>;
  /** A free port for a job's new SSH proxy device, reserved for the job as it is chosen. */
  allocatePort(job: JobRow): Promise<number>;
  /** Keeps a job's progress (the LXD operation it waits on) in the job row, for a restart. */
  remember(job: JobRow, progress: DriverState): Promise<void>;
  /** How much of each host machines may take (defaults: DEFAULT_HOST_LIMITS). */
  hostLimits?: HostLimits;
  /** A machine's process limit per GiB of its plan's memory (limits.processes; default 512). */
  processesPerGib?: number;
  /** Machines' private networks (network.ts); absent: machines have no network card. */
  network?: {
    /** apt's proxy inside machines, http://address:port */
    aptProxy: string;
    /** The customer's bridge on the endpoint and a free address on it, reserved for the job. */
    allocate(job: JobRow, m: MachineRow, endpoint: string): Promise<MachineNetwork>;
  };
}
