import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BillingCycle, ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { DocumentKind, DocumentPurpose, DocumentStatus } from "@hb/contracts/hb/billing/v1/documents_pb";
import { TransactionKind } from "@hb/contracts/hb/billing/v1/ledger_pb";
import {
  OrderPaymentMode,
  OrderPaymentStatus,
  OrderProvisioningStatus,
  OrderStatus,
} from "@hb/contracts/hb/billing/v1/orders_pb";
import * as codecs from "./enums.ts";

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
