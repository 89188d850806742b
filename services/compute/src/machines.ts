import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type Capabilities,
  CapabilitiesSchema,
  type Instance,
  InstanceSchema,
  type IpAddresses,
  IpAddressesSchema,
  type MachineSummary,
  MachineSummarySchema,
} from "@hb/contracts/hb/compute/v1/machines_pb";
import { apiError, notFound, prepared, type Sql, type TxSql } from "@hb/platform";
import { instanceStates, ipPurposes, machineKinds } from "./enums.ts";

export interface MachineRow {
  service_id: string;
  customer_id: string;
  kind: string;
  provider: string;
  hostname: string;
  location: string;
  state: string;
  has_instance: boolean;
  vcpus: number;
  memory_mb: number;
  disk_gb: number;
  os: string;
  rescue_mode: boolean;
  os_images: string[];
  disabled_controls: string[];
  /** The host port forwarded to its SSH port, where the driver reaches SSH that way. */
  ssh_port: number | null;
  /** Whether root may log in over SSH with a password (a VPS's sshd; off unless chosen). */
  ssh_password_login: boolean;
  /** The provider driver's own state; compute stores it and never reads it. */
  driver_state: Record<string, unknown>;
  service_status: string;
  /** Since when its instance has been gone without the platform removing it (a rebuild clears it). */
  lost_at?: Date | null;
  /** What it was doing when its service was suspended (running or stopped); null otherwise. */
  state_before_suspension?: string | null;
  created_at: Date;
}

/** What a machine's record shows of it (the machine pages read only these columns). */
export type MachineView = Pick<
  MachineRow,
  | "service_id"
  | "kind"
  | "provider"
  | "hostname"
  | "location"
  | "state"
  | "has_instance"
  | "vcpus"
  | "memory_mb"
  | "disk_gb"
  | "os"
  | "rescue_mode"
  | "ssh_port"
  | "disabled_controls"
  | "lost_at"
>;

export interface IpRow {
  address: string;
  version: number;
  prefix_length: number;
  purpose: string;
}

export const CONTROLS = ["power", "reinstall", "password", "snapshots", "backups", "rescue"] as const;

/**
 * Controls in the contract that no provider carries out and no route takes: never advertised,
 * whatever the plan says (issue 30: `rescue: true` was shown with no rescue boot behind it).
 */
const NOT_OFFERED: readonly string[] = ["rescue"];

/** Whether the plan allows a control; a switched-off control is refused before the provider is asked. */
export const capable = (m: Pick<MachineRow, "disabled_controls" | "kind">, c: (typeof CONTROLS)[number]) =>
  !NOT_OFFERED.includes(c) && !m.disabled_controls.includes(c) && (c !== "snapshots" || m.kind === "vps");

/** Which controls the plan allows. */
export const capabilitiesOf = (m: Pick<MachineRow, "disabled_controls" | "kind">) =>
  Object.fromEntries(CONTROLS.map((c) => [c, capable(m, c)])) as Record<(typeof CONTROLS)[number], boolean>;

/** Addresses from the documentation ranges, stable per service. */
export function addressesFor(serviceId: string): IpRow[] {
  const h = createHash("sha256").update(serviceId).digest();
  return [
    { address: `203.0.113.${1 + (h[0] % 250)}`, version: 4, prefix_length: 24, purpose: "primary" },
    {
      address: `2001:db8:${h[1].toString(16)}::${h[2].toString(16)}`,
      version: 6,
      prefix_length: 64,
      purpose: "primary",
    },
  ];
}

/**
 * Whether the record shows an instance: once a build has started (`creating`) and until it fails
 * or the machine is destroyed. The spec: absent when the machine has not been built or the build
 * failed; instance.state is creating while it is being built.
 */
export const hasInstance = (m: Pick<MachineRow, "has_instance" | "state">) =>
  m.has_instance || m.state === "creating";

/** The machine's instance, or undefined when it has none. */
function instanceOf(m: MachineView): Instance | undefined {
  if (!hasInstance(m)) return undefined;
  return create(InstanceSchema, {
    state: instanceStates.of(m.state),
    vcpus: m.vcpus,
    memoryMb: m.memory_mb,
    diskGb: m.disk_gb,
    osImageId: m.os,
    rescueMode: m.rescue_mode,
    sshPort: m.ssh_port ?? undefined,
    lostAt: m.lost_at ? timestampFromDate(m.lost_at) : undefined,
  });
}

/** A machine's addresses, with the primary one: its first IPv4 address, else its first. */
export function ipAddressesOf(ips: IpRow[]): IpAddresses {
  const primary = ips.find((i) => i.version === 4) ?? ips[0];
  return create(IpAddressesSchema, {
    addresses: ips.map((i) => ({
      address: i.address,
      version: i.version,
      prefixLength: i.prefix_length,
      purpose: ipPurposes.of(i.purpose),
    })),
    primaryIp: primary?.address,
  });
}

export const capabilitiesMessage = (m: MachineView): Capabilities =>
  create(CapabilitiesSchema, capabilitiesOf(m));

/** A service's machine as the contract shows it. */
export function machineSummary(m: MachineView, ips: IpRow[]): MachineSummary {
  return create(MachineSummarySchema, {
    serviceId: m.service_id,
    kind: machineKinds.of(m.kind),
    provider: m.provider,
    hostname: m.hostname,
    location: m.location,
    ipAddresses: ipAddressesOf(ips),
    instance: instanceOf(m),
    capabilities: capabilitiesMessage(m),
  });
}

/** The caller's machine of a service; another customer's is indistinguishable from a missing one. */
export async function ownMachine(
  db: Sql | TxSql,
  customerId: string,
  serviceId: string,
  kind: string,
  lock = false,
): Promise<MachineRow> {
  const rows = await db.unsafe<MachineRow[]>(
    `select * from machines where service_id = $1 and customer_id = $2 and ($3 = '' or kind = $3)${lock ? " for update" : ""}`,
    [serviceId, customerId, kind],
    prepared,
  );
  if (!rows[0])
    throw notFound(kind === "vps" ? "VPS" : kind === "dedicated" ? "Dedicated server" : "Service");
  return rows[0];
}

/** The rules every control shares, in order: service state, instance exists, not still building. */
export function assertControllable(m: MachineRow, control: (typeof CONTROLS)[number]) {
  if (m.service_status === "suspended" || m.service_status === "terminated") {
    throw apiError("FORBIDDEN", `The service is ${m.service_status}`);
  }
  if (!hasInstance(m)) throw apiError("NOT_FOUND", "The machine does not exist or its build failed");
  if (m.state === "creating") {
    // A machine built before is being rebuilt (reinstall, snapshot revert or backup restore).
    throw apiError(
      "CONFLICT",
      m.has_instance
        ? "The machine is being rebuilt (reinstall, snapshot revert or backup restore); try again when its job has finished"
        : "The machine is still being built",
    );
  }
  // A lost machine takes the controls that rebuild it (reinstall; a backup restore, which its
  // creation refuses on its own) and refuses the rest clearly, rather than each failing at the provider.
  if (m.lost_at && control !== "reinstall" && control !== "backups") throw lostMachine();
  assertCapability(m, control);
}

/** The refusal of an action a lost machine cannot take (409: the machine is in the wrong state). */
export const lostMachine = () =>
  apiError(
    "CONFLICT",
    "The machine's instance no longer exists at the provider; reinstall it (or restore a backup) to rebuild it",
  );

/** A control switched off for the plan: refused before the provider is asked, reads included. */
export function assertCapability(m: MachineRow, control: (typeof CONTROLS)[number]) {
  if (!capabilitiesOf(m)[control]) {
    throw apiError("ACTION_NOT_ALLOWED", `The ${control} control is not available for this plan`);
  }
}

export const ipsOf = (db: Sql | TxSql, serviceId: string) =>
  db<
    IpRow[]
  >`select address, version, prefix_length, purpose from ip_addresses where service_id = ${serviceId} order by version, address`;
