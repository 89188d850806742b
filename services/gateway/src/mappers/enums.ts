import { BillingCycle, ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import type { CYCLES } from "../wire/money.ts";
import type { SERVICE_STATUSES } from "../wire/service.ts";
import { wireEnum } from "./values.ts";

/** Billing's shared enums and the spec's words for them. */
const recurring = {
  hourly: BillingCycle.HOURLY,
  monthly: BillingCycle.MONTHLY,
  quarterly: BillingCycle.QUARTERLY,
  semiannually: BillingCycle.SEMIANNUALLY,
  annually: BillingCycle.ANNUALLY,
  biennially: BillingCycle.BIENNIALLY,
} as const;

/** The cycles a price or a service can have. */
export const cycles = wireEnum<BillingCycle, (typeof CYCLES)[number]>("billing cycle", recurring);

/** An add-on's cycle: a recurring one, or one_time. */
export const addonCycles = wireEnum<BillingCycle, (typeof CYCLES)[number] | "one_time">("add-on cycle", {
  ...recurring,
  one_time: BillingCycle.ONE_TIME,
});

export const serviceStatuses = wireEnum<ServiceStatus, (typeof SERVICE_STATUSES)[number]>("service status", {
  pending_payment: ServiceStatus.PENDING_PAYMENT,
  pending: ServiceStatus.PENDING,
  installing: ServiceStatus.INSTALLING,
  active: ServiceStatus.ACTIVE,
  provisioning_failed: ServiceStatus.PROVISIONING_FAILED,
  suspended: ServiceStatus.SUSPENDED,
  terminated: ServiceStatus.TERMINATED,
  cancelled: ServiceStatus.CANCELLED,
});

export const productKinds = wireEnum<ProductKind, "vps" | "dedicated" | "game">("product kind", {
  vps: ProductKind.VPS,
  dedicated: ProductKind.DEDICATED,
  game: ProductKind.GAME,
});
