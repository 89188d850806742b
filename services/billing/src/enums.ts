import { AddonBillingType, AddonStatus } from "@hb/contracts/hb/billing/v1/addons_pb";
import { BillingCycle, ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { DocumentKind, DocumentPurpose, DocumentStatus } from "@hb/contracts/hb/billing/v1/documents_pb";
import { TransactionKind } from "@hb/contracts/hb/billing/v1/ledger_pb";
import {
  OrderPaymentMode,
  OrderPaymentStatus,
  OrderProvisioningStatus,
  OrderStatus,
} from "@hb/contracts/hb/billing/v1/orders_pb";
import { CancellationType, ServiceAction } from "@hb/contracts/hb/billing/v1/services_pb";
import { UpgradeKind, UpgradeStatus } from "@hb/contracts/hb/billing/v1/upgrades_pb";

/**
 * The one place billing translates its stored words (the database's text columns) to the
 * contract's enums and back.
 */
export interface EnumCodec<S extends string, E extends number> {
  /** A stored word as the enum; a word the contract does not know is a bug, so it throws. */
  out(stored: string): E;
  /** The stored word of an enum value from a request; undefined for UNSPECIFIED or an unknown number. */
  in(value: number): S | undefined;
  /** The stored word of a value the contract requires to be defined; a request without one is a bug, so it throws. */
  defined(value: number): S;
}

export function enumCodec<S extends string, E extends number>(words: Record<S, E>): EnumCodec<S, E> {
  const back = new Map<number, S>(Object.entries(words).map(([w, v]) => [v as number, w as S]));
  return {
    out(stored) {
      const v = (words as Record<string, E | undefined>)[stored];
      if (v === undefined) throw new Error(`no contract value for stored word "${stored}"`);
      return v;
    },
    in: (value) => back.get(value),
    defined(value) {
      const word = back.get(value);
      if (word === undefined) throw new Error(`enum value ${value} passed the contract's rules undefined`);
      return word;
    },
  };
}

export const billingCycle = enumCodec({
  hourly: BillingCycle.HOURLY,
  monthly: BillingCycle.MONTHLY,
  quarterly: BillingCycle.QUARTERLY,
  semiannually: BillingCycle.SEMIANNUALLY,
  annually: BillingCycle.ANNUALLY,
  biennially: BillingCycle.BIENNIALLY,
  one_time: BillingCycle.ONE_TIME,
});

export const productKind = enumCodec({
  vps: ProductKind.VPS,
  dedicated: ProductKind.DEDICATED,
  game: ProductKind.GAME,
});

export const serviceStatus = enumCodec({
  pending_payment: ServiceStatus.PENDING_PAYMENT,
  pending: ServiceStatus.PENDING,
  installing: ServiceStatus.INSTALLING,
  active: ServiceStatus.ACTIVE,
  provisioning_failed: ServiceStatus.PROVISIONING_FAILED,
  suspended: ServiceStatus.SUSPENDED,
  terminated: ServiceStatus.TERMINATED,
  cancelled: ServiceStatus.CANCELLED,
});

export const documentKind = enumCodec({ invoice: DocumentKind.INVOICE, proforma: DocumentKind.PROFORMA });

export const documentStatus = enumCodec({
  unpaid: DocumentStatus.UNPAID,
  paid: DocumentStatus.PAID,
  cancelled: DocumentStatus.CANCELLED,
  converted: DocumentStatus.CONVERTED,
});

export const documentPurpose = enumCodec({
  order: DocumentPurpose.ORDER,
  renewal: DocumentPurpose.RENEWAL,
  manual: DocumentPurpose.MANUAL,
  upgrade: DocumentPurpose.UPGRADE,
  addon: DocumentPurpose.ADDON,
});

export const orderStatus = enumCodec({
  pending: OrderStatus.PENDING,
  active: OrderStatus.ACTIVE,
  cancelled: OrderStatus.CANCELLED,
});

export const orderPaymentStatus = enumCodec({
  unpaid: OrderPaymentStatus.UNPAID,
  paid: OrderPaymentStatus.PAID,
});

export const orderPaymentMode = enumCodec({
  credit: OrderPaymentMode.CREDIT,
  invoice: OrderPaymentMode.INVOICE,
});

export const orderProvisioningStatus = enumCodec({
  not_started: OrderProvisioningStatus.NOT_STARTED,
  in_progress: OrderProvisioningStatus.IN_PROGRESS,
  completed: OrderProvisioningStatus.COMPLETED,
  failed: OrderProvisioningStatus.FAILED,
});

export const transactionKind = enumCodec({
  credit_added: TransactionKind.CREDIT_ADDED,
  credit_removed: TransactionKind.CREDIT_REMOVED,
  payment: TransactionKind.PAYMENT,
  refund: TransactionKind.REFUND,
  hourly_charge: TransactionKind.HOURLY_CHARGE,
});

export const cancellationType = enumCodec({ end_of_term: CancellationType.END_OF_TERM });

export const serviceAction = enumCodec({
  suspend: ServiceAction.SUSPEND,
  unsuspend: ServiceAction.UNSUSPEND,
  terminate: ServiceAction.TERMINATE,
});

export const addonBillingType = enumCodec({
  one_time: AddonBillingType.ONE_TIME,
  recurring: AddonBillingType.RECURRING,
});

export const addonStatus = enumCodec({
  pending_payment: AddonStatus.PENDING_PAYMENT,
  active: AddonStatus.ACTIVE,
  cancelled: AddonStatus.CANCELLED,
});

export const upgradeKind = enumCodec({ product: UpgradeKind.PRODUCT, options: UpgradeKind.OPTIONS });

export const upgradeStatus = enumCodec({
  awaiting_payment: UpgradeStatus.AWAITING_PAYMENT,
  executing: UpgradeStatus.EXECUTING,
  completed: UpgradeStatus.COMPLETED,
  cancelled: UpgradeStatus.CANCELLED,
});
