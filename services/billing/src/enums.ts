import { AddonBillingType, AddonStatus } from "@hb/contracts/hb/billing/v1/addons_pb";
import { BillingCycle, ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { CancellationType, ServiceAction } from "@hb/contracts/hb/billing/v1/services_pb";
import { UpgradeKind, UpgradeStatus } from "@hb/contracts/hb/billing/v1/upgrades_pb";

/**
 * The one place billing translates between the names its tables store ("monthly", "active", …)
 * and the contract's enums. A stored name the contract does not know reads as UNSPECIFIED (0).
 */
export interface EnumNames<E extends number> {
  toProto(name: string): E;
  /** The stored name; undefined for UNSPECIFIED or a value this build does not know. */
  fromProto(value: number): string | undefined;
}

export function enumNames<E extends number>(names: Record<string, E>): EnumNames<E> {
  const byValue = new Map<number, string>(Object.entries(names).map(([name, value]) => [value, name]));
  return {
    toProto: (name) => names[name] ?? (0 as E),
    fromProto: (value) => byValue.get(value),
  };
}

export const cycles = enumNames({
  hourly: BillingCycle.HOURLY,
  monthly: BillingCycle.MONTHLY,
  quarterly: BillingCycle.QUARTERLY,
  semiannually: BillingCycle.SEMIANNUALLY,
  annually: BillingCycle.ANNUALLY,
  biennially: BillingCycle.BIENNIALLY,
  one_time: BillingCycle.ONE_TIME,
});

export const serviceStatuses = enumNames({
  pending_payment: ServiceStatus.PENDING_PAYMENT,
  pending: ServiceStatus.PENDING,
  installing: ServiceStatus.INSTALLING,
  active: ServiceStatus.ACTIVE,
  provisioning_failed: ServiceStatus.PROVISIONING_FAILED,
  suspended: ServiceStatus.SUSPENDED,
  terminated: ServiceStatus.TERMINATED,
  cancelled: ServiceStatus.CANCELLED,
});

export const productKinds = enumNames({
  vps: ProductKind.VPS,
  dedicated: ProductKind.DEDICATED,
  game: ProductKind.GAME,
});

export const cancellationTypes = enumNames({ end_of_term: CancellationType.END_OF_TERM });

export const serviceActions = enumNames({
  suspend: ServiceAction.SUSPEND,
  unsuspend: ServiceAction.UNSUSPEND,
  terminate: ServiceAction.TERMINATE,
});

export const addonBillingTypes = enumNames({
  one_time: AddonBillingType.ONE_TIME,
  recurring: AddonBillingType.RECURRING,
});

export const addonStatuses = enumNames({
  pending_payment: AddonStatus.PENDING_PAYMENT,
  active: AddonStatus.ACTIVE,
  cancelled: AddonStatus.CANCELLED,
});

export const upgradeKinds = enumNames({ product: UpgradeKind.PRODUCT, options: UpgradeKind.OPTIONS });

export const upgradeStatuses = enumNames({
  awaiting_payment: UpgradeStatus.AWAITING_PAYMENT,
  executing: UpgradeStatus.EXECUTING,
  completed: UpgradeStatus.COMPLETED,
  cancelled: UpgradeStatus.CANCELLED,
});
