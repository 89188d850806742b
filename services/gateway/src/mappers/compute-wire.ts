import type { DescEnum } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type PowerAction, PowerActionSchema } from "@hb/contracts/hb/compute/v1/actions_pb";
import { type CopyStatus, CopyStatusSchema } from "@hb/contracts/hb/compute/v1/copies_pb";
import { type JobStatus, JobStatusSchema } from "@hb/contracts/hb/compute/v1/jobs_pb";
import {
  type InstanceState,
  InstanceStateSchema,
  type IpAddressPurpose,
  IpAddressPurposeSchema,
  type MachineKind,
  MachineKindSchema,
} from "@hb/contracts/hb/compute/v1/machines_pb";
import { enumTable } from "@hb/platform/enum-words";
import {
  COPY_STATUS_WORDS,
  INSTANCE_STATE_WORDS,
  IP_ADDRESS_PURPOSE_WORDS,
  JOB_STATUS_WORDS,
  MACHINE_KIND_WORDS,
  POWER_ACTION_WORDS,
} from "../wire/words.ts";

/**
 * Compute's enums and the spec's lowercase wire strings, both ways, read from the contract's
 * descriptors (the words are the generated tuples the wire's zod enums use); every compute mapper
 * and route converts here. A value the gateway does not know (a newer compute) fails the answer
 * loudly rather than putting a made-up string on the wire.
 */
function wireNames<N extends string, E extends number>(what: string, desc: DescEnum, words: readonly N[]) {
  const table = enumTable<N>(desc, words);
  return {
    /** The enum of a wire name. */
    value: (name: N): E => table.value(name) as E,
    /** The wire name of an enum value. */
    name(value: number): N {
      const name = table.word(value);
      if (name === undefined)
        throw new Error(`compute sent ${what} ${value}, which the gateway does not know`);
      return name;
    },
    /** The enum of a name read from a request, or undefined for one the enum does not have. */
    parse: (name: string): E | undefined => table.value(name) as E | undefined,
  };
}

export const machineKinds = wireNames<(typeof MACHINE_KIND_WORDS)[number], MachineKind>(
  "machine kind",
  MachineKindSchema,
  MACHINE_KIND_WORDS,
);
export const instanceStates = wireNames<(typeof INSTANCE_STATE_WORDS)[number], InstanceState>(
  "instance state",
  InstanceStateSchema,
  INSTANCE_STATE_WORDS,
);
export const ipPurposes = wireNames<(typeof IP_ADDRESS_PURPOSE_WORDS)[number], IpAddressPurpose>(
  "address purpose",
  IpAddressPurposeSchema,
  IP_ADDRESS_PURPOSE_WORDS,
);
export const copyStatuses = wireNames<(typeof COPY_STATUS_WORDS)[number], CopyStatus>(
  "copy status",
  CopyStatusSchema,
  COPY_STATUS_WORDS,
);
export const jobStatuses = wireNames<(typeof JOB_STATUS_WORDS)[number], JobStatus>(
  "job status",
  JobStatusSchema,
  JOB_STATUS_WORDS,
);
export const powerActions = wireNames<(typeof POWER_ACTION_WORDS)[number], PowerAction>(
  "power action",
  PowerActionSchema,
  POWER_ACTION_WORDS,
);

/** An instant in the spec's form (ISO 8601, UTC, milliseconds). */
export function isoTime(t: Timestamp | undefined, what: string): string {
  if (!t) throw new Error(`compute sent no ${what}`);
  return timestampDate(t).toISOString();
}

/** A byte counter on the wire (a JSON number: exact up to 2^53, far beyond any month's traffic). */
export const byteCount = (n: bigint): number => Number(n);
