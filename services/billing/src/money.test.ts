import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { addCycle, formatMoney, money, monthlyEquivalent, parseMoney, toNumber } from "./money.ts";

describe("money", () => {
  it("parses and formats exactly with 4 decimals", () => {
    assert.equal(formatMoney(money("10")), "10.0000");
    assert.equal(formatMoney(money("0.1") + money("0.2")), "0.3000");
    assert.equal(formatMoney(money("-5.25")), "-5.2500");
    assert.equal(formatMoney(money("19.9999") * 3n), "59.9997");
    assert.equal(toNumber(money("12.3400")), 12.34);
  });
  it("refuses malformed amounts", () => {
    for (const bad of ["", "1.23456", "abc", "1e5", "1,00", "--1", "NaN", " . "]) {
      assert.equal(parseMoney(bad), undefined, bad);
    }
  });
  it("adds billing cycles on the calendar, clamping month ends", () => {
    assert.equal(
      addCycle(new Date("2026-01-31T00:00:00Z"), "monthly").toISOString(),
      "2026-02-28T00:00:00.000Z",
    );
    assert.equal(
      addCycle(new Date("2026-01-15T10:00:00Z"), "quarterly").toISOString(),
      "2026-04-15T10:00:00.000Z",
    );
    assert.equal(
      addCycle(new Date("2024-02-29T00:00:00Z"), "annually").toISOString(),
      "2025-02-28T00:00:00.000Z",
    );
  });
  it("spreads a cycle's amount over its months", () => {
    assert.equal(formatMoney(monthlyEquivalent(money("30"), "quarterly")), "10.0000");
    assert.equal(formatMoney(monthlyEquivalent(money("100"), "annually")), "8.3333");
  });
});
