import { BillingCycle, ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { DocumentPurpose, DocumentStatus } from "@hb/contracts/hb/billing/v1/documents_pb";
import { TransactionKind } from "@hb/contracts/hb/billing/v1/ledger_pb";
import {
  OrderPaymentMode,
  OrderPaymentStatus,
  OrderProvisioningStatus,
  OrderStatus,
} from "@hb/contracts/hb/billing/v1/orders_pb";
import type { z } from "zod";
import type { DOCUMENT_STATUSES } from "../wire/invoice.ts";
import type { cycle } from "../wire/money.ts";
import type { orderStatus, paymentStatus } from "../wire/order.ts";
import type { SERVICE_STATUSES } from "../wire/service.ts";
import type { transaction } from "../wire/transaction.ts";
import { enumWords } from "./contract.ts";

/** The one place the gateway turns billing's enums into the spec's lowercase words and back. */

export const billingCycleWords = enumWords<z.infer<typeof cycle>>("billing cycle", {
  [BillingCycle.HOURLY]: "hourly",
  [BillingCycle.MONTHLY]: "monthly",
  [BillingCycle.QUARTERLY]: "quarterly",
  [BillingCycle.SEMIANNUALLY]: "semiannually",
  [BillingCycle.ANNUALLY]: "annually",
  [BillingCycle.BIENNIALLY]: "biennially",
});

/** An add-on's cycle: a recurring one, or one_time. */
export const addonCycleWords = enumWords<z.infer<typeof cycle> | "one_time">("add-on cycle", {
  ...billingCycleWords.words,
  [BillingCycle.ONE_TIME]: "one_time",
});

export const productKindWords = enumWords("product kind", {
  [ProductKind.VPS]: "vps",
  [ProductKind.DEDICATED]: "dedicated",
  [ProductKind.GAME]: "game",
});

export const serviceStatusWords = enumWords<(typeof SERVICE_STATUSES)[number]>("service status", {
  [ServiceStatus.PENDING_PAYMENT]: "pending_payment",
  [ServiceStatus.PENDING]: "pending",
  [ServiceStatus.INSTALLING]: "installing",
  [ServiceStatus.ACTIVE]: "active",
  [ServiceStatus.PROVISIONING_FAILED]: "provisioning_failed",
  [ServiceStatus.SUSPENDED]: "suspended",
  [ServiceStatus.TERMINATED]: "terminated",
  [ServiceStatus.CANCELLED]: "cancelled",
});

export const documentStatusWords = enumWords<(typeof DOCUMENT_STATUSES)[number]>("document status", {
  [DocumentStatus.UNPAID]: "unpaid",
  [DocumentStatus.PAID]: "paid",
  [DocumentStatus.CANCELLED]: "cancelled",
  [DocumentStatus.CONVERTED]: "converted",
});

export const documentPurposeWords = enumWords("document purpose", {
  [DocumentPurpose.ORDER]: "order",
  [DocumentPurpose.RENEWAL]: "renewal",
  [DocumentPurpose.MANUAL]: "manual",
  [DocumentPurpose.UPGRADE]: "upgrade",
  [DocumentPurpose.ADDON]: "addon",
});

export const orderStatusWords = enumWords<z.infer<typeof orderStatus>>("order status", {
  [OrderStatus.PENDING]: "pending",
  [OrderStatus.ACTIVE]: "active",
  [OrderStatus.CANCELLED]: "cancelled",
});

export const orderPaymentStatusWords = enumWords<z.infer<typeof paymentStatus>>("payment status", {
  [OrderPaymentStatus.UNPAID]: "unpaid",
  [OrderPaymentStatus.PAID]: "paid",
});

export const orderPaymentModeWords = enumWords("payment mode", {
  [OrderPaymentMode.CREDIT]: "credit",
  [OrderPaymentMode.INVOICE]: "invoice",
});

export const provisioningStatusWords = enumWords("provisioning status", {
  [OrderProvisioningStatus.NOT_STARTED]: "not_started",
  [OrderProvisioningStatus.IN_PROGRESS]: "in_progress",
  [OrderProvisioningStatus.COMPLETED]: "completed",
  [OrderProvisioningStatus.FAILED]: "failed",
});

export const transactionKindWords = enumWords<z.infer<typeof transaction>["type"]>("transaction kind", {
  [TransactionKind.CREDIT_ADDED]: "credit_added",
  [TransactionKind.CREDIT_REMOVED]: "credit_removed",
  [TransactionKind.PAYMENT]: "payment",
  [TransactionKind.REFUND]: "refund",
  [TransactionKind.HOURLY_CHARGE]: "hourly_charge",
});
