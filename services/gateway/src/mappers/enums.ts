import {
  BillingCycleSchema,
  ProductKindSchema,
  ServiceStatusSchema,
} from "@hb/contracts/hb/billing/v1/common_pb";
import { DocumentPurposeSchema, DocumentStatusSchema } from "@hb/contracts/hb/billing/v1/documents_pb";
import { TransactionKindSchema } from "@hb/contracts/hb/billing/v1/ledger_pb";
import {
  OrderPaymentModeSchema,
  OrderPaymentStatusSchema,
  OrderProvisioningStatusSchema,
  OrderStatusSchema,
} from "@hb/contracts/hb/billing/v1/orders_pb";
import { CYCLES } from "../wire/money.ts";
import {
  BILLING_CYCLE_WORDS,
  DOCUMENT_PURPOSE_WORDS,
  DOCUMENT_STATUS_WORDS,
  ORDER_PAYMENT_MODE_WORDS,
  ORDER_PAYMENT_STATUS_WORDS,
  ORDER_PROVISIONING_STATUS_WORDS,
  ORDER_STATUS_WORDS,
  PRODUCT_KIND_WORDS,
  SERVICE_STATUS_WORDS,
  TRANSACTION_KIND_WORDS,
} from "../wire/words.ts";
import { enumWords } from "./contract.ts";

/**
 * Billing's enums and the spec's lowercase words, both ways, read from the contract's descriptors
 * (the words are the generated tuples the wire's zod enums use too): nothing here to keep in step
 * with proto/ by hand.
 */

/** A price's or a service's cycle: a recurring one (one_time belongs to add-ons). */
export const billingCycleWords = enumWords("billing cycle", BillingCycleSchema, CYCLES);

/** An add-on's cycle: a recurring one, or one_time. */
export const addonCycleWords = enumWords("add-on cycle", BillingCycleSchema, BILLING_CYCLE_WORDS);

export const productKindWords = enumWords("product kind", ProductKindSchema, PRODUCT_KIND_WORDS);
export const serviceStatusWords = enumWords("service status", ServiceStatusSchema, SERVICE_STATUS_WORDS);
export const documentStatusWords = enumWords("document status", DocumentStatusSchema, DOCUMENT_STATUS_WORDS);
export const documentPurposeWords = enumWords(
  "document purpose",
  DocumentPurposeSchema,
  DOCUMENT_PURPOSE_WORDS,
);
export const orderStatusWords = enumWords("order status", OrderStatusSchema, ORDER_STATUS_WORDS);
export const orderPaymentStatusWords = enumWords(
  "payment status",
  OrderPaymentStatusSchema,
  ORDER_PAYMENT_STATUS_WORDS,
);
export const orderPaymentModeWords = enumWords(
  "payment mode",
  OrderPaymentModeSchema,
  ORDER_PAYMENT_MODE_WORDS,
);
export const provisioningStatusWords = enumWords(
  "provisioning status",
  OrderProvisioningStatusSchema,
  ORDER_PROVISIONING_STATUS_WORDS,
);
export const transactionKindWords = enumWords(
  "transaction kind",
  TransactionKindSchema,
  TRANSACTION_KIND_WORDS,
);
