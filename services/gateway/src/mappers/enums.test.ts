import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BillingCycle, ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { DocumentPurpose, DocumentStatus } from "@hb/contracts/hb/billing/v1/documents_pb";
import { TransactionKind } from "@hb/contracts/hb/billing/v1/ledger_pb";
import {
  OrderPaymentMode,
  OrderPaymentStatus,
  OrderProvisioningStatus,
  OrderStatus,
} from "@hb/contracts/hb/billing/v1/orders_pb";
import { DOCUMENT_STATUSES } from "../wire/invoice.ts";
import { CYCLES } from "../wire/money.ts";
import { orderStatus, paymentStatus } from "../wire/order.ts";
import { SERVICE_STATUSES } from "../wire/service.ts";
import { transaction } from "../wire/transaction.ts";
import * as words from "./enums.ts";

/** The numeric values of a generated enum other than UNSPECIFIED. */
const values = (e: Record<string, string | number>) =>
  Object.values(e).filter((v): v is number => typeof v === "number" && v !== 0);

describe("the gateway's enum words", () => {
  // Each contract enum, its words, the words the spec's schema allows, and values with no word
  // (add-ons bought once have no cycle on a product's price list).
  const table = [
    ["billing cycle", BillingCycle, words.billingCycleWords, CYCLES, [BillingCycle.ONE_TIME]],
    ["product kind", ProductKind, words.productKindWords, ["vps", "dedicated", "game"], []],
    ["service status", ServiceStatus, words.serviceStatusWords, SERVICE_STATUSES, []],
    ["document status", DocumentStatus, words.documentStatusWords, DOCUMENT_STATUSES, []],
    [
      "document purpose",
      DocumentPurpose,
      words.documentPurposeWords,
      ["order", "renewal", "manual", "upgrade", "addon"],
      [],
    ],
    ["order status", OrderStatus, words.orderStatusWords, orderStatus.options, []],
    ["payment status", OrderPaymentStatus, words.orderPaymentStatusWords, paymentStatus.options, []],
    ["payment mode", OrderPaymentMode, words.orderPaymentModeWords, ["credit", "invoice"], []],
    [
      "provisioning status",
      OrderProvisioningStatus,
      words.provisioningStatusWords,
      ["not_started", "in_progress", "completed", "failed"],
      [],
    ],
    ["transaction kind", TransactionKind, words.transactionKindWords, transaction.shape.type.options, []],
  ] as const;

  for (const [name, contract, map, wire, absent] of table) {
    it(`gives every ${name} the contract has a distinct word the spec allows`, () => {
      const seen = new Set<string>();
      for (const v of values(contract)) {
        if ((absent as readonly number[]).includes(v)) continue;
        const w = map.wire(v);
        assert.ok((wire as readonly string[]).includes(w), `${name} ${v} → ${w}`);
        assert.equal(seen.has(w), false, `${w} used twice`);
        seen.add(w);
        assert.equal(map.value(w), v);
      }
      assert.deepEqual([...seen].sort(), [...wire].sort(), `every ${name} word of the spec is reachable`);
    });
  }
});
