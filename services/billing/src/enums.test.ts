import assert from "node:assert/strict";
import { describe, it } from "node:test";
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
import { moneyOut } from "./contract-values.ts";
import * as codecs from "./enums.ts";
import { money } from "./money.ts";

const values = (e: Record<string, string | number>) =>
  Object.values(e).filter((v): v is number => typeof v === "number" && v !== 0);

describe("billing's enum codecs", () => {
  const table = [
    ["billing cycle", BillingCycle, codecs.billingCycle],
    ["product kind", ProductKind, codecs.productKind],
    ["service status", ServiceStatus, codecs.serviceStatus],
    ["document kind", DocumentKind, codecs.documentKind],
    ["document status", DocumentStatus, codecs.documentStatus],
    ["document purpose", DocumentPurpose, codecs.documentPurpose],
    ["order status", OrderStatus, codecs.orderStatus],
    ["order payment status", OrderPaymentStatus, codecs.orderPaymentStatus],
    ["order payment mode", OrderPaymentMode, codecs.orderPaymentMode],
    ["order provisioning status", OrderProvisioningStatus, codecs.orderProvisioningStatus],
    ["transaction kind", TransactionKind, codecs.transactionKind],
    ["cancellation type", CancellationType, codecs.cancellationType],
    ["service action", ServiceAction, codecs.serviceAction],
    ["add-on billing type", AddonBillingType, codecs.addonBillingType],
    ["add-on status", AddonStatus, codecs.addonStatus],
    ["upgrade kind", UpgradeKind, codecs.upgradeKind],
    ["upgrade status", UpgradeStatus, codecs.upgradeStatus],
  ] as const;

  for (const [name, contract, codec] of table) {
    it(`stores every ${name} of the contract as a word and reads it back`, () => {
      for (const v of values(contract)) {
        const word = codec.in(v);
        assert.ok(word, `${name} ${v} has no stored word`);
        assert.equal(codec.out(word), v);
      }
    });
  }

  it("gives UNSPECIFIED and unknown numbers no word, and throws on a stored word the contract lacks", () => {
    assert.equal(codecs.documentKind.in(DocumentKind.UNSPECIFIED), undefined);
    assert.equal(codecs.orderPaymentMode.in(42), undefined);
    assert.throws(() => codecs.documentStatus.out("lost"), /no contract value for stored word "lost"/);
  });
});

describe("money in the contract", () => {
  it("carries exact units as a 4-decimal string with the currency", () => {
    assert.deepEqual(moneyOut(money("0.1") + money("0.2"), "EUR"), { currency: "EUR", amount: "0.3000" });
    assert.deepEqual(moneyOut("-12.5", "USD"), { currency: "USD", amount: "-12.5000" });
    assert.deepEqual(moneyOut(money("99999999999999.9999"), "EUR").amount, "99999999999999.9999");
  });
});
