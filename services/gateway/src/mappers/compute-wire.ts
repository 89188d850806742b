import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { PowerAction } from "@hb/contracts/hb/compute/v1/actions_pb";
import { CopyStatus } from "@hb/contracts/hb/compute/v1/copies_pb";
import { JobStatus } from "@hb/contracts/hb/compute/v1/jobs_pb";
import { InstanceState, IpAddressPurpose, MachineKind } from "@hb/contracts/hb/compute/v1/machines_pb";
import type { INSTANCE_STATES } from "../wire/service.ts";

/**
 * Compute's enums and the spec's lowercase wire strings, both ways; every compute mapper and route
 * converts here. A value the gateway does not know (a newer compute) fails the answer loudly
 * rather than putting a made-up string on the wire.
 */
function wireNames<N extends string, E extends number>(what: string, names: Record<N, E>) {
  const byValue = new Map<number, N>(Object.entries(names).map(([n, v]) => [v as number, n as N]));
  return {
    /** The enum of a wire name. */
    value: (name: N): E => names[name],
    /** The wire name of an enum value. */
    name(value: number): N {
      const name = byValue.get(value);
      if (name === undefined)
        throw new Error(`compute sent ${what} ${value}, which the gateway does not know`);
      return name;
    },
    /** The enum of a name read from a request, or undefined for one the enum does not have. */
    parse: (name: string): E | undefined => (Object.hasOwn(names, name) ? names[name as N] : undefined),
  };
}

export const machineKinds = wireNames("machine kind", {
  vps: MachineKind.VPS,
  dedicated: MachineKind.DEDICATED,
  game: MachineKind.GAME,
});

export const instanceStates = wireNames<(typeof INSTANCE_STATES)[number], InstanceState>("instance state", {
  creating: InstanceState.CREATING,
  running: InstanceState.RUNNING,
  stopped: InstanceState.STOPPED,
  paused: InstanceState.PAUSED,
  error: InstanceState.ERROR,
});

export const ipPurposes = wireNames("address purpose", {
  primary: IpAddressPurpose.PRIMARY,
  additional: IpAddressPurpose.ADDITIONAL,
});

export const copyStatuses = wireNames("copy status", {
  creating: CopyStatus.CREATING,
  available: CopyStatus.AVAILABLE,
  restoring: CopyStatus.RESTORING,
});

export const jobStatuses = wireNames("job status", {
  running: JobStatus.RUNNING,
  succeeded: JobStatus.SUCCEEDED,
  failed: JobStatus.FAILED,
});

export const powerActions = wireNames("power action", {
  start: PowerAction.START,
  stop: PowerAction.STOP,
  shutdown: PowerAction.SHUTDOWN,
  reboot: PowerAction.REBOOT,
  restart: PowerAction.RESTART,
  poweroff: PowerAction.POWEROFF,
  on: PowerAction.ON,
  off: PowerAction.OFF,
  kill: PowerAction.KILL,
});

/** An instant in the spec's form (ISO 8601, UTC, milliseconds). */
export function isoTime(t: Timestamp | undefined, what: string): string {
  if (!t) throw new Error(`compute sent no ${what}`);
  return timestampDate(t).toISOString();
}

/** A byte counter on the wire (a JSON number: exact up to 2^53, far beyond any month's traffic). */
export const byteCount = (n: bigint): number => Number(n);
