import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AddonStatus, AddonStatusSchema } from "@hb/contracts/hb/billing/v1/addons_pb";
import { MoneySchema } from "@hb/contracts/hb/platform/v1/money_pb";
import { amountNumber, decimal4, enumWords, iso, isoOrNull } from "./contract.ts";

const eur = (amount: string) => create(MoneySchema, { currency: "EUR", amount });

describe("money on the wire", () => {
  it("writes every exact amount with 4 decimals, sign kept", () => {
    assert.equal(decimal4(eur("12.5")), "12.5000");
    assert.equal(decimal4(eur("3")), "3.0000");
    assert.equal(decimal4(eur("-0.004")), "-0.0040");
    assert.equal(decimal4(eur("0.0700")), "0.0700");
  });

  it("prints the numeric fields with exactly the digits billing sent", () => {
    for (const [amount, json] of [
      ["0.0700", "0.07"],
      ["0.5700", "0.57"],
      ["2.0100", "2.01"],
      ["-12.5000", "-12.5"],
      ["1234567.8901", "1234567.8901"],
      ["0.0000", "0"],
    ] as const) {
      assert.equal(JSON.stringify(amountNumber(eur(amount))), json, amount);
    }
  });

  it("refuses what is not an exact amount, and a missing one", () => {
    for (const bad of ["", "1.23456", "1e5", "abc", "1,00"]) {
      assert.throws(() => decimal4(eur(bad)), /not an exact amount/, bad);
    }
    assert.throws(() => decimal4(undefined), /no amount/);
  });
});

describe("instants on the wire", () => {
  it("writes ISO 8601 with milliseconds", () => {
    const at = new Date("2026-11-23T10:00:00.123Z");
    assert.equal(iso(timestampFromDate(at)), "2026-11-23T10:00:00.123Z");
    assert.throws(() => iso(undefined), /no time/);
  });

  it("writes an absent optional instant as null", () => {
    assert.equal(isoOrNull(undefined), null);
    assert.equal(isoOrNull(timestampFromDate(new Date("2026-11-23T00:00:00Z"))), "2026-11-23T00:00:00.000Z");
  });
});

describe("enumWords", () => {
  const words = enumWords("add-on status", AddonStatusSchema, ["pending_payment", "active"]);
  it("maps values to words and words back, from the contract's descriptor", () => {
    assert.equal(words.wire(AddonStatus.ACTIVE), "active");
    assert.equal(words.value("pending_payment"), AddonStatus.PENDING_PAYMENT);
    assert.equal(words.value("blue"), undefined);
    assert.equal(words.value("toString"), undefined);
  });
  it("treats UNSPECIFIED, a value left out and an unknown number as a backend bug", () => {
    assert.throws(() => words.wire(0), /no add-on status/);
    assert.throws(() => words.wire(AddonStatus.CANCELLED), /no add-on status/);
    assert.throws(() => words.wire(99), /no add-on status/);
    assert.equal(words.value("cancelled"), undefined);
  });
  it("refuses at start-up a word the contract does not have", () => {
    assert.throws(() => enumWords("add-on status", AddonStatusSchema, ["active", "archived"]), /archived/);
  });
});
