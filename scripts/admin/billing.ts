import { randomUUID } from "node:crypto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { AuthStaffService } from "@hb/contracts/hb/auth/v1/auth_staff_pb";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";
import {
  BillingCycleSchema,
  ProductKindSchema,
  ServiceStatus,
  ServiceStatusSchema,
} from "@hb/contracts/hb/billing/v1/common_pb";
import { DocumentKindSchema } from "@hb/contracts/hb/billing/v1/documents_pb";
import { TopUpStaffService, TopUpStatus } from "@hb/contracts/hb/billing/v1/payments_pb";
import { ServiceActionSchema } from "@hb/contracts/hb/billing/v1/services_pb";
import { PAGE_SIZE } from "@hb/platform/paging";
import { type ArgSpec, type CommandGroup, client, command, enumFlag, list, UsageError } from "./common.ts";

const billing = () => client([BillingService, BillingStaffService], "BILLING_ADDR", "127.0.0.1:50053");
const auth = () => client([AuthService, AuthStaffService], "AUTH_ADDR", "127.0.0.1:50051");
const topUps = () => client([TopUpStaffService], "BILLING_ADDR", "127.0.0.1:50053");

/** "monthly=10,annually=100" as the product's prices. */
function prices(text: string, currency: string) {
  return list(text).map((p) => {
    const [cycle, price] = p.split("=");
    return {
      cycle: enumFlag(BillingCycleSchema, "prices", cycle.trim()),
      price: { currency, amount: (price ?? "").trim() },
    };
  });
}

/** A decimal typed on the command line; the backend checks it and fills the currency it is in. */
const amount = (text: string | undefined) => (text ? { currency: "", amount: text } : undefined);

const serviceArg: ArgSpec = { name: "serviceId", help: "the service's id", field: "service_id" };
const reason = { reason: { type: "string", value: "R", help: "shown to the customer" } } as const;
const serviceState = (action: "suspend" | "unsuspend" | "terminate", summary: string) =>
  command({
    summary,
    args: [serviceArg],
    flags: reason,
    run: ([id], f) =>
      billing().adminSetServiceState({
        serviceId: id,
        action: enumFlag(ServiceActionSchema, "action", action),
        reason: f.reason ?? "",
      }),
  });

export const billingCommands: CommandGroup = {
  title: "Billing: credit, catalogue, services, documents, clock",
  commands: {
    "credit add": command({
      summary: "Adds credit to an account, in its own currency (negative removes)",
      flags: {
        person: { type: "string", value: "ID", required: true, help: "the person credited (e.g. the owner)" },
        customer: { type: "string", value: "ID", required: true, help: "the customer's id" },
        amount: {
          type: "string",
          value: "100",
          required: true,
          help: "decimal; write --amount=-5 to remove",
        },
        description: { type: "string", value: "D", help: "shown on the account" },
      },
      run: async (_a, f) => {
        // Credit is always in the account's own currency.
        const { customer } = await auth().getCustomer({ customerId: f.customer });
        return billing().adminAdjustCredit({
          personId: f.person,
          customerId: f.customer,
          amount: f.amount,
          currency: customer?.currency ?? "",
          description: f.description ?? "",
        });
      },
    }),
    "transfer list": command({
      summary: "Lists bank transfers customers asked for, pending ones first (--all: every status)",
      flags: { all: { type: "boolean", help: "credited and cancelled ones too" } },
      run: async (_a, f) =>
        (
          await topUps().listBankTransfers({
            status: f.all ? TopUpStatus.UNSPECIFIED : TopUpStatus.PENDING,
            page: 1,
            limit: PAGE_SIZE.max,
          })
        ).transfers,
    }),
    "transfer confirm": command({
      summary: "Confirms the money of a bank transfer arrived and credits it (once)",
      args: [{ name: "reference", help: "as the customer quoted it, e.g. HB-7K3M-Q9TX", field: "reference" }],
      flags: {
        amount: {
          type: "string",
          value: "100",
          required: true,
          field: "received_amount",
          help: "what arrived (may differ from what was asked)",
        },
        "above-requested": {
          type: "boolean",
          field: "above_requested",
          help: "credit more than the customer asked for (an overpayment)",
        },
      },
      // Billing records the admin command itself as who confirmed (its certificate says so): no
      // staff member is named from here. A fresh key per run: a run is one confirmation.
      run: ([reference], f) =>
        topUps().confirmBankTransfer({
          reference,
          receivedAmount: f.amount,
          aboveRequested: f["above-requested"] === true,
          idempotencyKey: randomUUID(),
        }),
    }),
    "product create": command({
      summary: "Adds a product to the catalogue (hourly=0.02 in --prices for an hourly product)",
      flags: {
        name: { type: "string", value: "N", required: true, help: "product name" },
        kind: { type: "string", value: "vps|dedicated|game", help: "default vps" },
        prices: { type: "string", value: "monthly=10,annually=100", required: true, help: "price per cycle" },
        vcpus: { type: "int", help: "virtual CPUs" },
        memory: { type: "int", value: "MB", field: "memory_mb", help: "memory in MB" },
        disk: { type: "int", value: "GB", field: "disk_gb", help: "disk in GB" },
        location: { type: "string", value: "fra1", help: "data centre" },
        os: { type: "string", value: "LIST", field: "os_images", help: "e.g. ubuntu-24.04,debian-12" },
        currency: { type: "string", value: "EUR", help: "default EUR" },
        "min-credit": { type: "string", value: "10", help: "credit an hourly order needs" },
      },
      run: async (_a, f) => {
        const currency = f.currency ?? "EUR";
        return (
          await billing().adminCreateProduct({
            name: f.name,
            kind: enumFlag(ProductKindSchema, "kind", f.kind ?? "vps"),
            prices: prices(f.prices, currency),
            vcpus: f.vcpus ?? 0,
            memoryMb: f.memory ?? 0,
            diskGb: f.disk ?? 0,
            location: f.location ?? "",
            osImages: list(f.os),
            currency,
            minimumCredit: f["min-credit"] ? { currency, amount: f["min-credit"] } : undefined,
          })
        ).product;
      },
    }),
    "product option": command({
      summary: "Adds an option (add-on) to a product",
      flags: {
        product: { type: "string", value: "ID", required: true, help: "the product's id" },
        name: { type: "string", value: "N", required: true, help: "option name" },
        monthly: { type: "string", value: "2.50", field: "recurring_price", help: "recurring price" },
        "one-time": { type: "string", value: "10", field: "one_time_price", help: "one-time price" },
      },
      run: async (_a, f) =>
        (
          await billing().adminAddProductOption({
            productId: f.product,
            name: f.name,
            recurringMonthlyPrice: amount(f.monthly),
            oneTimePrice: amount(f["one-time"]),
          })
        ).option,
    }),
    "product list": command({
      summary: "Lists the catalogue",
      run: async () => (await billing().listProducts({})).products,
    }),
    "service create": command({
      summary: "Creates a service for a customer (--provision builds it through compute)",
      flags: {
        customer: { type: "string", value: "ID", required: true, help: "the customer's id" },
        product: { type: "string", value: "ID", help: "the product's id" },
        kind: { type: "string", value: "vps|dedicated|game", help: "default vps" },
        hostname: { type: "string", value: "H", help: "host name" },
        name: { type: "string", value: "N", help: "display name" },
        status: { type: "string", value: "S", help: "e.g. active" },
        provision: { type: "boolean", help: "build it through compute: pending → active" },
        os: { type: "string", value: "IMAGE", field: "os_image_id", help: "OS image" },
      },
      run: async (_a, f) =>
        billing().adminCreateService({
          customerId: f.customer,
          productId: f.product ?? "",
          kind: enumFlag(ProductKindSchema, "kind", f.kind ?? "vps"),
          hostname: f.hostname ?? "",
          name: f.name ?? "",
          status: f.status ? enumFlag(ServiceStatusSchema, "status", f.status) : ServiceStatus.UNSPECIFIED,
          provision: f.provision === true,
          osImageId: f.os ?? "",
        }),
    }),
    "service suspend": serviceState("suspend", "Suspends a service"),
    "service unsuspend": serviceState("unsuspend", "Lifts a service's suspension"),
    "service terminate": serviceState("terminate", "Terminates a service"),
    "invoice create": command({
      summary: "Issues a document for a service",
      flags: {
        service: { type: "string", value: "ID", required: true, help: "the service's id" },
        amount: { type: "string", value: "10", help: "decimal" },
        kind: { type: "string", value: "invoice|proforma", help: "default invoice" },
        description: { type: "string", value: "D", help: "line description" },
      },
      run: async (_a, f) =>
        (
          await billing().adminCreateInvoice({
            serviceId: f.service,
            amount: amount(f.amount),
            kind: enumFlag(DocumentKindSchema, "kind", f.kind ?? "invoice"),
            description: f.description ?? "",
          })
        ).document,
    }),
    "clock advance": command({
      summary: "Moves billing's clock forward and runs what falls due (npm start and tests only)",
      flags: {
        days: { type: "int", help: "days forward" },
        hours: { type: "int", help: "hours forward" },
        seconds: { type: "int", help: "seconds forward" },
      },
      run: async (_a, f) => {
        const seconds = (f.days ?? 0) * 86_400 + (f.hours ?? 0) * 3_600 + (f.seconds ?? 0);
        if (!Number.isSafeInteger(seconds) || [f.days, f.hours, f.seconds].some((n) => (n ?? 0) < 0)) {
          throw new UsageError("--days, --hours and --seconds must be whole numbers of 0 or more");
        }
        const { now } = await billing().adminAdvanceClock({ seconds: BigInt(seconds) });
        return { now: now ? timestampDate(now).toISOString() : null };
      },
    }),
    "billing settings get": command({
      summary: "Shows the recurring cycle's settings (renewal lead time, overdue graces)",
      run: async () => (await billing().adminGetBillingSettings({})).settings,
    }),
    "billing settings set": command({
      summary: "Changes the recurring cycle's settings (only the flags given)",
      flags: {
        "renewal-lead-days": {
          type: "int",
          field: "renewal_lead_days",
          help: "days before the paid-up date a renewal is issued (default 7; 0 on the day)",
        },
        "suspend-grace-days": {
          type: "int",
          field: "suspend_grace_days",
          help: "days past the paid-up date an unpaid service is suspended (default 3)",
        },
        "terminate-grace-days": {
          type: "int",
          field: "terminate_grace_days",
          help: "days past the paid-up date an unpaid service is terminated (default 30; 0 never)",
        },
      },
      run: async (_a, f) =>
        (
          await billing().adminUpdateBillingSettings({
            renewalLeadDays: f["renewal-lead-days"],
            suspendGraceDays: f["suspend-grace-days"],
            terminateGraceDays: f["terminate-grace-days"],
          })
        ).settings,
    }),
    "billing autopay": command({
      summary: "Turns an account's automatic payment of renewals from credit on or off (on by default)",
      flags: {
        customer: { type: "string", value: "ID", required: true, help: "the customer's id" },
        on: { type: "on-off", required: true, field: "auto_pay", help: "on or off" },
      },
      run: (_a, f) => billing().adminSetAccountBilling({ customerId: f.customer, autoPay: f.on }),
    }),
  },
};
