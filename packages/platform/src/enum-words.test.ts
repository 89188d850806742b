import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ServiceStatus, ServiceStatusSchema } from "@hb/contracts/hb/billing/v1/common_pb";
import { PaymentMode, PaymentModeSchema } from "@hb/contracts/hb/events/v1/events_pb";
import { enumFromWord, enumOfWord, enumWord, wordsOf } from "./enum-words.ts";

describe("enum words", () => {
  it("spell a value without the enum's prefix, in lower case, and back", () => {
    assert.equal(enumWord(ServiceStatusSchema, ServiceStatus.PENDING_PAYMENT), "pending_payment");
    assert.equal(enumWord(PaymentModeSchema, PaymentMode.CREDIT), "credit");
    assert.equal(enumOfWord(ServiceStatusSchema, "provisioning_failed"), ServiceStatus.PROVISIONING_FAILED);
    assert.equal(enumOfWord(PaymentModeSchema, "invoice"), PaymentMode.INVOICE);
    for (const v of ServiceStatusSchema.values.slice(1)) {
      assert.equal(enumOfWord(ServiceStatusSchema, enumWord(ServiceStatusSchema, v.number)), v.number);
    }
  });

  it("map the unspecified value to no word and an unknown word to unspecified", () => {
    assert.equal(enumWord(ServiceStatusSchema, ServiceStatus.UNSPECIFIED), "");
    assert.equal(enumWord(ServiceStatusSchema, 99), "");
    assert.equal(enumOfWord(ServiceStatusSchema, "unspecified"), ServiceStatus.UNSPECIFIED);
    assert.equal(enumOfWord(ServiceStatusSchema, "cash"), ServiceStatus.UNSPECIFIED);
    assert.equal(enumOfWord(ServiceStatusSchema, ""), ServiceStatus.UNSPECIFIED);
  });

  it("refuse a word the enum lacks when asked strictly, naming the words it has", () => {
    assert.equal(enumFromWord(ServiceStatusSchema, "suspended"), ServiceStatus.SUSPENDED);
    assert.deepEqual(wordsOf(PaymentModeSchema), ["credit", "invoice"]);
    assert.throws(() => enumFromWord(PaymentModeSchema, "cash"), /"cash" is not one of credit, invoice/);
    assert.throws(() => enumFromWord(PaymentModeSchema, "unspecified"), /is not one of/);
  });
});
