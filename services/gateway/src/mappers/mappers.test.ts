import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import type { GenEnum } from "@bufbuild/protobuf/codegenv2";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AddonBillingType, AddonSchema, AddonStatus } from "@hb/contracts/hb/billing/v1/addons_pb";
import { GetServiceStatsResponseSchema } from "@hb/contracts/hb/billing/v1/billing_pb";
import {
  BillingCycle,
  ProductKind,
  ProductKindSchema,
  ServiceStatus,
  ServiceStatusSchema,
} from "@hb/contracts/hb/billing/v1/common_pb";
import { CancellationType, ServiceSummarySchema } from "@hb/contracts/hb/billing/v1/services_pb";
import {
  UpgradeKind,
  UpgradeKindSchema,
  UpgradeSchema,
  UpgradeStatus,
  UpgradeStatusSchema,
} from "@hb/contracts/hb/billing/v1/upgrades_pb";
import { MoneySchema } from "@hb/contracts/hb/platform/v1/money_pb";
import { addon } from "../wire/addon.ts";
import { serviceRecord, serviceStats, serviceSummary } from "../wire/service.ts";
import { upgrade } from "../wire/upgrade.ts";
import { addonJson } from "./addon.ts";
import { addonCycleWords, billingCycleWords, productKindWords, serviceStatusWords } from "./enums.ts";
import { serviceRecordJson, serviceStatsJson, serviceSummaryJson } from "./service.ts";
import { upgradeJson } from "./upgrade.ts";

const eur = (amount: string) => create(MoneySchema, { currency: "EUR", amount });
const at = (iso: string) => timestampFromDate(new Date(iso));

/** Every value of a contract enum but UNSPECIFIED. */
const valuesOf = <E extends number>(desc: GenEnum<E>) =>
  desc.values.filter((v) => v.number !== 0).map((v) => v.number as E);

describe("gateway mappers: enums", () => {
  it("has a wire word for every service status, product kind and add-on cycle billing can send", () => {
    for (const s of valuesOf(ServiceStatusSchema))
      assert.equal(serviceStatusWords.value(serviceStatusWords.wire(s)) ?? 0, s);
    for (const k of valuesOf(ProductKindSchema))
      assert.equal(productKindWords.value(productKindWords.wire(k)) ?? 0, k);
    assert.equal(addonCycleWords.wire(BillingCycle.ONE_TIME), "one_time");
    assert.equal(billingCycleWords.wire(BillingCycle.SEMIANNUALLY), "semiannually");
  });

  it("refuses to invent a word for UNSPECIFIED, and reads an absent word as UNSPECIFIED", () => {
    assert.throws(() => serviceStatusWords.wire(ServiceStatus.UNSPECIFIED), /no service status \(0\)/);
    // A service's cycle is never one-time: that is an add-on's.
    assert.throws(() => billingCycleWords.wire(BillingCycle.ONE_TIME), /no billing cycle \(7\)/);
    assert.equal(serviceStatusWords.value(undefined) ?? 0, ServiceStatus.UNSPECIFIED);
  });

  it("maps every upgrade kind and status to the spec's words", () => {
    const base = {
      id: "u",
      serviceId: "s",
      fromProductId: "p",
      amount: eur("0"),
      credit: eur("0"),
      createdAt: at("2026-11-23T10:00:00Z"),
    };
    const words = valuesOf(UpgradeStatusSchema).map(
      (status) =>
        upgradeJson(create(UpgradeSchema, { ...base, status, kind: UpgradeKind.PRODUCT }), null).status,
    );
    assert.deepEqual(words, ["awaiting_payment", "executing", "completed", "cancelled"]);
    const kinds = valuesOf(UpgradeKindSchema).map(
      (kind) =>
        upgradeJson(create(UpgradeSchema, { ...base, kind, status: UpgradeStatus.COMPLETED }), null).type,
    );
    assert.deepEqual(kinds, ["product", "options"]);
  });
});

describe("gateway mappers: records fit the response schemas", () => {
  const service = create(ServiceSummarySchema, {
    id: "0195e3a0-7c1e-7b3a-9f5e-2d4c6a8b0c11",
    customerId: "0195e39e-0a1b-7c2d-8e3f-4a5b6c7d8e01",
    name: "VPS Small",
    hostname: "web-1.example.com",
    kind: ProductKind.VPS,
    status: ServiceStatus.ACTIVE,
    product: { id: "0195e39f-1a2b-7c3d-8e4f-5a6b7c8d9e01", name: "VPS Small" },
    billing: { cycle: BillingCycle.MONTHLY, price: eur("12.5"), nextDueDate: at("2026-12-23T10:00:00Z") },
    cancellation: {
      type: CancellationType.END_OF_TERM,
      reason: "moving",
      requestedAt: at("2026-11-23T10:00:00Z"),
      effectiveAt: at("2026-12-23T10:00:00Z"),
    },
    createdAt: at("2026-11-23T10:00:00Z"),
  });

  it("a service: summary and record, nulls where billing sent nothing", () => {
    const summary = serviceSummaryJson(service);
    assert.deepEqual(serviceSummary.parse(summary), summary);
    assert.deepEqual(summary.billing, {
      cycle: "monthly",
      amount: "12.5000",
      currency: "EUR",
      next_due_date: "2026-12-23T10:00:00.000Z",
    });
    assert.equal(summary.cancellation?.type, "end_of_term");
    const record = serviceRecordJson(service);
    assert.deepEqual(serviceRecord.parse(record), record);
    assert.equal(record.order_id, null);
    assert.equal(record.failure_reason, null);
  });

  it("the services stats: counts and amounts by status word", () => {
    const stats = serviceStatsJson(
      create(GetServiceStatsResponseSchema, {
        byStatus: [
          { status: ServiceStatus.ACTIVE, count: 2, amount: eur("25.0000") },
          { status: ServiceStatus.SUSPENDED, count: 1, amount: eur("0.0700") },
        ],
      }),
    );
    assert.deepEqual(stats, {
      total: 3,
      by_status: { active: 2, suspended: 1 },
      amount_by_status: { active: 25, suspended: 0.07 },
    });
    assert.deepEqual(serviceStats.parse(stats), stats);
  });

  it("an add-on and an upgrade netting to a credit", () => {
    const a = addonJson(
      create(AddonSchema, {
        id: "0195e3a2-1a2b-7c3d-8e4f-5a6b7c8d9e0f",
        optionId: "0195e39f-3c4d-7e5f-8a6b-7c8d9e0f1a2b",
        name: "Extra IPv4",
        billingType: AddonBillingType.ONE_TIME,
        cycle: BillingCycle.ONE_TIME,
        quantity: 2,
        price: eur("50"),
        paid: eur("0"),
        status: AddonStatus.PENDING_PAYMENT,
        startedAt: at("2026-11-23T10:00:00Z"),
      }),
    );
    assert.deepEqual(addon.parse(a), a);
    assert.equal(a.next_due_date, null);
    assert.equal(a.amount, "50.0000");
    const u = upgradeJson(
      create(UpgradeSchema, {
        id: "0195e3a3-4b5c-7d6e-8f7a-8b9c0d1e2f3a",
        serviceId: "0195e3a0-7c1e-7b3a-9f5e-2d4c6a8b0c11",
        kind: UpgradeKind.OPTIONS,
        status: UpgradeStatus.COMPLETED,
        fromProductId: "0195e39f-1a2b-7c3d-8e4f-5a6b7c8d9e01",
        removeOptionIds: ["0195e39f-3c4d-7e5f-8a6b-7c8d9e0f1a2b"],
        amount: eur("-1.9333"),
        credit: eur("1.9333"),
        pricedUntil: at("2026-12-23T10:00:00Z"),
        createdAt: at("2026-11-23T10:00:00Z"),
        completedAt: at("2026-11-23T10:00:01Z"),
      }),
      null,
    );
    assert.deepEqual(upgrade.parse(u), u);
    assert.equal(u.amount, -1.9333);
    assert.equal(u.to_product_id, null);
    assert.equal(u.order_id, null);
  });
});
