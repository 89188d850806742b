import type { DescEnum } from "@bufbuild/protobuf";
import type { GenEnum } from "@bufbuild/protobuf/codegenv2";
import { AddonBillingTypeSchema, AddonStatusSchema } from "@hb/contracts/hb/billing/v1/addons_pb";
import {
  BillingCycleSchema,
  ProductKindSchema,
  ServiceStatusSchema,
} from "@hb/contracts/hb/billing/v1/common_pb";
import {
  DocumentKindSchema,
  DocumentPurposeSchema,
  DocumentStatusSchema,
} from "@hb/contracts/hb/billing/v1/documents_pb";
import { TransactionKindSchema } from "@hb/contracts/hb/billing/v1/ledger_pb";
import {
  OrderPaymentModeSchema,
  OrderPaymentStatusSchema,
  OrderProvisioningStatusSchema,
  OrderStatusSchema,
} from "@hb/contracts/hb/billing/v1/orders_pb";
import { CancellationTypeSchema, ServiceActionSchema } from "@hb/contracts/hb/billing/v1/services_pb";
import { UpgradeKindSchema, UpgradeStatusSchema } from "@hb/contracts/hb/billing/v1/upgrades_pb";
import { enumTable } from "@hb/platform/enum-words";
import * as W from "@hb/platform/enum-words.gen";

/**
 * Billing's stored words (the database's text columns) and the contract's enums, both ways. Every
 * table is read from the contract's descriptor (platform `enumTable`); the word tuples, generated
 * from the same descriptors by `npm run gen`, only give the words their literal types.
 */
export interface EnumCodec<S extends string, E extends number> {
  /** A stored word as the enum; a word the contract does not know is a bug, so it throws. */
  out(stored: string): E;
  /** The stored word of an enum value from a request; undefined for UNSPECIFIED or an unknown number. */
  in(value: number): S | undefined;
  /** The stored word of a value the contract requires to be defined; a request without one is a bug, so it throws. */
  defined(value: number): S;
}

/**
 * A codec from the contract's descriptor and its generated words. (A hand-written word → value
 * record is still accepted, for codecs added before this; prefer the descriptor.)
 */
function enumCodec<S extends string, E extends number>(
  desc: GenEnum<E>,
  words: readonly S[],
): EnumCodec<S, E>;
function enumCodec<S extends string, E extends number>(words: Record<S, E>): EnumCodec<S, E>;
function enumCodec<S extends string, E extends number>(
  source: DescEnum | Record<S, E>,
  only?: readonly S[],
): EnumCodec<S, E> {
  const byWord = new Map<string, E>();
  const back = new Map<number, S>();
  if (only) {
    const table = enumTable<S>(source as DescEnum, only);
    for (const [value, word] of Object.entries(table.words) as [string, S][]) {
      byWord.set(word, Number(value) as E);
      back.set(Number(value), word);
    }
  } else {
    for (const [word, value] of Object.entries(source) as [S, E][]) {
      byWord.set(word, value);
      back.set(value, word);
    }
  }
  return {
    out(stored) {
      const v = byWord.get(stored);
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

export const billingCycle = enumCodec(BillingCycleSchema, W.BILLING_CYCLE_WORDS);
export const productKind = enumCodec(ProductKindSchema, W.PRODUCT_KIND_WORDS);
export const serviceStatus = enumCodec(ServiceStatusSchema, W.SERVICE_STATUS_WORDS);
export const documentKind = enumCodec(DocumentKindSchema, W.DOCUMENT_KIND_WORDS);
export const documentStatus = enumCodec(DocumentStatusSchema, W.DOCUMENT_STATUS_WORDS);
export const documentPurpose = enumCodec(DocumentPurposeSchema, W.DOCUMENT_PURPOSE_WORDS);
export const orderStatus = enumCodec(OrderStatusSchema, W.ORDER_STATUS_WORDS);
export const orderPaymentStatus = enumCodec(OrderPaymentStatusSchema, W.ORDER_PAYMENT_STATUS_WORDS);
export const orderPaymentMode = enumCodec(OrderPaymentModeSchema, W.ORDER_PAYMENT_MODE_WORDS);
export const orderProvisioningStatus = enumCodec(
  OrderProvisioningStatusSchema,
  W.ORDER_PROVISIONING_STATUS_WORDS,
);
export const transactionKind = enumCodec(TransactionKindSchema, W.TRANSACTION_KIND_WORDS);
export const cancellationType = enumCodec(CancellationTypeSchema, W.CANCELLATION_TYPE_WORDS);
export const serviceAction = enumCodec(ServiceActionSchema, W.SERVICE_ACTION_WORDS);
export const addonBillingType = enumCodec(AddonBillingTypeSchema, W.ADDON_BILLING_TYPE_WORDS);
export const addonStatus = enumCodec(AddonStatusSchema, W.ADDON_STATUS_WORDS);
export const upgradeKind = enumCodec(UpgradeKindSchema, W.UPGRADE_KIND_WORDS);
export const upgradeStatus = enumCodec(UpgradeStatusSchema, W.UPGRADE_STATUS_WORDS);
