import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { GenEnum } from "@bufbuild/protobuf/codegenv2";
import { AddonBillingTypeSchema, AddonStatusSchema } from "@hb/contracts/hb/billing/v1/addons_pb";
import {
  BillingCycleSchema,
  ProductKind,
  ProductKindSchema,
  ServiceStatusSchema,
} from "@hb/contracts/hb/billing/v1/common_pb";
import { CancellationTypeSchema, ServiceActionSchema } from "@hb/contracts/hb/billing/v1/services_pb";
import { UpgradeKindSchema, UpgradeStatusSchema } from "@hb/contracts/hb/billing/v1/upgrades_pb";
import { moneyOut } from "./contract-values.ts";
import * as enums from "./enums.ts";
import { money } from "./money.ts";

const tables: [GenEnum<number>, enums.EnumNames<number>][] = [
  [BillingCycleSchema, enums.cycles],
  [ServiceStatusSchema, enums.serviceStatuses],
  [ProductKindSchema, enums.productKinds],
  [CancellationTypeSchema, enums.cancellationTypes],
  [ServiceActionSchema, enums.serviceActions],
  [AddonBillingTypeSchema, enums.addonBillingTypes],
  [AddonStatusSchema, enums.addonStatuses],
  [UpgradeKindSchema, enums.upgradeKinds],
  [UpgradeStatusSchema, enums.upgradeStatuses],
];

describe("billing's enum names", () => {
  it("give every contract value a stored name that reads back as the same value", () => {
    for (const [desc, names] of tables) {
      for (const v of desc.values.filter((x) => x.number !== 0)) {
        const name = names.fromProto(v.number);
        assert.equal(name, v.localName.toLowerCase(), `${v.name} is stored as its lower-case name`);
        assert.equal(names.toProto(name!), v.number);
      }
    }
  });

  it("read a stored name the contract lacks as UNSPECIFIED, and UNSPECIFIED as no name", () => {
    assert.equal(enums.productKinds.toProto("web_hosting"), ProductKind.UNSPECIFIED);
    assert.equal(enums.productKinds.fromProto(ProductKind.UNSPECIFIED), undefined);
  });
});

describe("money in the contract", () => {
  it("carries exact units as a 4-decimal string with the currency", () => {
    assert.deepEqual(moneyOut(money("0.1") + money("0.2"), "EUR"), { currency: "EUR", amount: "0.3000" });
    assert.deepEqual(moneyOut("-12.5", "USD"), { currency: "USD", amount: "-12.5000" });
    assert.deepEqual(moneyOut(money("99999999999999.9999"), "EUR").amount, "99999999999999.9999");
  });
});
