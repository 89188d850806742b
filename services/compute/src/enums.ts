import type { DescEnum } from "@bufbuild/protobuf";
import { type PowerAction, PowerActionSchema } from "@hb/contracts/hb/compute/v1/actions_pb";
import { type CopyStatus, CopyStatusSchema } from "@hb/contracts/hb/compute/v1/copies_pb";
import {
  type Control,
  ControlSchema,
  type InstanceState,
  InstanceStateSchema,
  type IpAddressPurpose,
  IpAddressPurposeSchema,
  type MachineKind,
  MachineKindSchema,
} from "@hb/contracts/hb/compute/v1/machines_pb";
import { enumOfWord, enumWord } from "@hb/platform";

/**
 * Compute's database keeps kinds, states and statuses as text, each the word of its contract
 * value (MACHINE_KIND_VPS ↔ vps); every conversion between the two is here, through the
 * platform's one enum-word mapping, so no table can drift from the contract.
 */
function twoWay<E extends number>(desc: DescEnum) {
  return {
    /** The enum of a stored name (UNSPECIFIED, 0, for a name the contract does not know). */
    of: (name: string): E => enumOfWord<E>(desc, name),
    /** The stored name of an enum value; undefined for UNSPECIFIED and unknown values. */
    name: (value: number): string | undefined => enumWord(desc, value) || undefined,
  };
}

export const machineKinds = twoWay<MachineKind>(MachineKindSchema);
export const instanceStates = twoWay<InstanceState>(InstanceStateSchema);
export const controls = twoWay<Control>(ControlSchema);
export const ipPurposes = twoWay<IpAddressPurpose>(IpAddressPurposeSchema);
export const copyStatuses = twoWay<CopyStatus>(CopyStatusSchema);
export const powerActions = twoWay<PowerAction>(PowerActionSchema);

/**
 * The kind a request names, as the machines.kind filter: "" for UNSPECIFIED (any kind). The
 * contract refuses a value it does not define, so none is read as "any".
 */
export const kindFilter = (kind: MachineKind): string => machineKinds.name(kind) ?? "";
