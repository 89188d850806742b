import type { ServiceImpl } from "@connectrpc/connect";
import type { ComputeDeskService } from "@hb/contracts/hb/compute/v1/compute_desk_pb";
import type { ComputeService } from "@hb/contracts/hb/compute/v1/compute_pb";
import type { ComputeStaffService } from "@hb/contracts/hb/compute/v1/compute_staff_pb";
import type { ComputeProvisioningService } from "@hb/contracts/hb/compute/v1/provisioning_pb";
import { apiError } from "@hb/platform";
import type { Drivers, ProviderDriver } from "./driver.ts";
import type { Jobs } from "./jobs.ts";
import type { MachineRow } from "./machines.ts";

/**
 * Some of compute's handlers, whichever of its services they belong to; main binds the union of
 * every module's to each service definition, and each definition serves only its own methods.
 */
export type Handlers = Partial<
  ServiceImpl<typeof ComputeService> &
    ServiceImpl<typeof ComputeProvisioningService> &
    ServiceImpl<typeof ComputeStaffService> &
    ServiceImpl<typeof ComputeDeskService>
>;

export interface ComputeDeps {
  jobs: Jobs;
  drivers: Drivers;
  /** The provider new machines are created on. */
  defaultProvider: string;
  /** The provider new VPSes are created on, when not the default one (COMPUTE_DRIVER=lxd). */
  vpsProvider?: string;
  /** The most machines a provider may hold (COMPUTE_MAX_MACHINES; 0: no maximum). */
  maxMachines?: number;
}

/** The customer a call is made for; a call without one is refused. */
export function callerId(c: { customerId: string } | undefined): string {
  if (!c?.customerId) throw apiError("UNAUTHORIZED", "caller missing");
  return c.customerId;
}

/** The driver of a machine; a machine whose provider has none cannot be asked anything. */
export function driverOf(drivers: Drivers, m: Pick<MachineRow, "provider">): ProviderDriver {
  const driver = drivers[m.provider];
  if (!driver) throw apiError("PROVIDER_ERROR", `No driver for provider ${m.provider}`);
  return driver;
}
