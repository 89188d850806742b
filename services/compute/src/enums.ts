import { PowerAction } from "@hb/contracts/hb/compute/v1/actions_pb";
import { CopyStatus } from "@hb/contracts/hb/compute/v1/copies_pb";
import {
  Control,
  InstanceState,
  IpAddressPurpose,
  MachineKind,
} from "@hb/contracts/hb/compute/v1/machines_pb";

/**
 * Compute's database keeps kinds, states and statuses as text; the contract speaks enums. Every
 * conversion between the two is here.
 */
function twoWay<E extends number>(names: Record<string, E>) {
  const byValue = new Map(Object.entries(names).map(([name, value]) => [value, name]));
  return {
    /** The enum of a stored name (UNSPECIFIED, 0, for a name the contract does not know). */
    of: (name: string): E => names[name] ?? (0 as E),
    /** The stored name of an enum value; undefined for UNSPECIFIED and unknown values. */
    name: (value: number): string | undefined => byValue.get(value as E),
  };
}

export const machineKinds = twoWay({
  vps: MachineKind.VPS,
  dedicated: MachineKind.DEDICATED,
  game: MachineKind.GAME,
});

export const instanceStates = twoWay({
  creating: InstanceState.CREATING,
  running: InstanceState.RUNNING,
  stopped: InstanceState.STOPPED,
  paused: InstanceState.PAUSED,
  error: InstanceState.ERROR,
});

export const controls = twoWay({
  power: Control.POWER,
  reinstall: Control.REINSTALL,
  password: Control.PASSWORD,
  snapshots: Control.SNAPSHOTS,
  backups: Control.BACKUPS,
  rescue: Control.RESCUE,
});

export const ipPurposes = twoWay({
  primary: IpAddressPurpose.PRIMARY,
  additional: IpAddressPurpose.ADDITIONAL,
});

export const copyStatuses = twoWay({
  creating: CopyStatus.CREATING,
  available: CopyStatus.AVAILABLE,
  restoring: CopyStatus.RESTORING,
});

export const powerActions = twoWay({
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

/**
 * The kind a request names, as the machines.kind filter: "" for UNSPECIFIED (any kind). The
 * contract refuses a value it does not define, so none is read as "any".
 */
export const kindFilter = (kind: MachineKind): string => machineKinds.name(kind) ?? "";
