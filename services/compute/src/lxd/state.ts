import type { MachineNetwork } from "./network.ts";

/** What the driver keeps in machines.driver_state once a machine is built. */
export type LxdMachineState = {
  endpoint?: string;
  /** the cluster member it runs on, when the endpoint is a cluster */
  member?: string;
  ssh_port?: number;
  /** its place on its customer's network, when the host gives machines one */
  network?: MachineNetwork;
};

/** A job's progress, kept in jobs.driver_state between calls (and across a compute restart). */
export type Progress = {
  step?: number;
  /** the LXD operation the current step waits on */
  op?: string;
  /** when (ms) that operation was started */
  op_at?: number;
  endpoint?: string;
  member?: string;
  ssh_port?: number;
  /** since when (ms) the daemon has not answered */
  unreachable_since?: number;
  /** since when (ms) LXD has refused the step because the instance is busy with another operation */
  busy_since?: number;
  /** SSH ports found taken on the host and replaced */
  port_retries?: number;
  network?: MachineNetwork;
  /** a clean stop (a suspension's, a stop's, a shutdown's, a reboot's) ran out of time: it is forced */
  forced?: boolean;
  /** steps done again after LXD failed them in passing (transientLxdFailure) */
  transient_retries?: number;
  /** when (ms) a copy's job first started an operation: its deadline counts from there */
  started_at?: number;
};
