import type { Capabilities, Instance, MachineSummary } from "@hb/contracts/hb/compute/v1/machines_pb";
import type { z } from "zod";
import {
  type capabilities,
  type dedicatedDetail,
  type dedicatedRecord,
  type instance,
  VPS_STATUSES,
  type vpsDetail,
  type vpsRecord,
} from "../wire/machine.ts";
import type { serviceDetail, serviceSummary } from "../wire/service.ts";
import { instanceStates } from "./compute-wire.ts";
import { addressListJson } from "./ip-address.ts";

type ServiceWire = z.infer<typeof serviceSummary>;

/** The spec's VPS billing states: billing's own states folded onto them. */
export function vpsStatus(status: string): (typeof VPS_STATUSES)[number] {
  if (status === "active" || status === "suspended") return status;
  if (status === "terminated" || status === "cancelled") return "terminated";
  return VPS_STATUSES[0];
}

export function instanceJson(i: Instance): z.infer<typeof instance> {
  return {
    state: instanceStates.name(i.state),
    vcpus: i.vcpus,
    memory_mb: i.memoryMb,
    disk_gb: i.diskGb,
    os: i.osImageId,
    rescue_mode: i.rescueMode,
    ...(i.sshPort === undefined ? {} : { ssh_port: i.sshPort }),
  };
}

/** A machine's controls; a service without a machine (not provisioned) has none available. */
export function capabilitiesJson(c: Capabilities | undefined): z.infer<typeof capabilities> {
  return {
    power: c?.power ?? false,
    reinstall: c?.reinstall ?? false,
    password: c?.password ?? false,
    snapshots: c?.snapshots ?? false,
    backups: c?.backups ?? false,
    rescue: c?.rescue ?? false,
  };
}

/** The machine record of the lists: billing's service (wire shape) joined with compute's machine. */
function machineRecord<K extends "vps" | "dedicated">(
  kind: K,
  s: ServiceWire,
  m: MachineSummary | undefined,
) {
  const addresses = addressListJson(m?.ipAddresses);
  return {
    id: s.id,
    name: s.name,
    hostname: m?.hostname || s.hostname,
    status: vpsStatus(s.status),
    kind,
    // A service whose machine compute has not made yet has no provider: never a guessed one.
    provider: m?.provider ?? "",
    product: s.product,
    billing: s.billing,
    cancellation: s.cancellation,
    location: m?.location ?? "",
    primary_ip: addresses.primary_ip,
    ip_addresses: addresses.ip_addresses,
    ...(m?.instance ? { instance: instanceJson(m.instance) } : {}),
    created_at: s.created_at,
  };
}

/**
 * The list records as objects. The lists themselves write them from compute's bytes
 * (machine-page.ts), held to these by its tests; the details extend them.
 */
export const vpsRecordJson = (s: ServiceWire, m: MachineSummary | undefined): z.infer<typeof vpsRecord> =>
  machineRecord("vps", s, m);

export const vpsDetailJson = (s: ServiceWire, m: MachineSummary | undefined): z.infer<typeof vpsDetail> => ({
  ...machineRecord("vps", s, m),
  capabilities: capabilitiesJson(m?.capabilities),
});

export const dedicatedRecordJson = (
  s: ServiceWire,
  m: MachineSummary | undefined,
): z.infer<typeof dedicatedRecord> => machineRecord("dedicated", s, m);

export const dedicatedDetailJson = (
  s: ServiceWire,
  m: MachineSummary | undefined,
): z.infer<typeof dedicatedDetail> => ({
  ...machineRecord("dedicated", s, m),
  capabilities: capabilitiesJson(m?.capabilities),
});

/** The `machine` of GET /services/{id}: null for a service without one. */
export function serviceMachineJson(m: MachineSummary | undefined): z.infer<typeof serviceDetail>["machine"] {
  if (!m) return null;
  return {
    provider: m.provider,
    primary_ip: m.ipAddresses?.primaryIp ?? "",
    location: m.location,
    state: m.instance ? instanceStates.name(m.instance.state) : null,
  };
}
