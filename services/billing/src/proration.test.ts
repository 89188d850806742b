import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatMoney, money } from "./money.ts";
import { prorate, remainingShare, unusedValue } from "./proration.ts";

describe("proration", () => {
  it("charges the price difference for the share of the period left", () => {
    const due = new Date("2026-12-01T00:00:00Z");
    const half = remainingShare(due, "monthly", new Date("2026-11-16T00:00:00Z"));
    assert.equal(half, 500_000n);
    assert.equal(formatMoney(prorate(money("10"), money("20"), half)), "5.0000");
  });
  it("nets to a credit when moving down, and to zero on the due date", () => {
    const due = new Date("2026-12-01T00:00:00Z");
    const share = remainingShare(due, "monthly", new Date("2026-11-16T00:00:00Z"));
    assert.equal(formatMoney(prorate(money("20"), money("10"), share)), "-5.0000");
    assert.equal(prorate(money("10"), money("20"), remainingShare(due, "monthly", due)), 0n);
  });
  it("rounds to the ten-thousandth", () => {
    assert.equal(formatMoney(prorate(money("0"), money("10"), 333_333n)), "3.3333");
    assert.equal(formatMoney(prorate(money("0"), money("10"), 666_667n)), "6.6667");
  });
  it("counts every whole cycle paid ahead, not just the current one", () => {
    const due = new Date("2026-12-01T00:00:00Z");
    assert.equal(remainingShare(due, "monthly", new Date("2026-01-01T00:00:00Z")), 11_000_000n);
    // Annual service prepaid two years, half a year into the first: 1.5 years of difference.
    const twoYears = new Date("2028-01-01T00:00:00Z");
    const mid = new Date("2026-07-02T12:00:00Z");
    const share = remainingShare(twoYears, "annually", mid);
    assert.ok(share > 1_490_000n && share < 1_510_000n, String(share));
    assert.equal(formatMoney(prorate(money("100"), money("200"), 2_000_000n)), "200.0000");
  });
  it("gives nothing once the paid time has run out", () => {
    const due = new Date("2026-12-01T00:00:00Z");
    assert.equal(remainingShare(due, "annually", new Date("2027-01-01T00:00:00Z")), 0n);
  });
  it("rounds a credit towards zero", () => {
    assert.equal(formatMoney(prorate(money("10"), money("0"), 333_333n)), "-3.3333");
    assert.equal(formatMoney(prorate(money("10"), money("0"), 666_667n)), "-6.6666");
  });
});

describe("unused value of something paid for a period", () => {
  const start = new Date("2026-11-01T00:00:00Z");
  const until = new Date("2026-12-01T00:00:00Z");
  it("is the unused share, rounded down", () => {
    assert.equal(
      formatMoney(unusedValue(money("2"), start, until, new Date("2026-11-16T00:00:00Z"))),
      "1.0000",
    );
    assert.equal(
      formatMoney(unusedValue(money("1"), start, until, new Date("2026-11-11T00:00:00Z"))),
      "0.6666",
    );
  });
  it("is nothing after the period and never more than was paid before it", () => {
    assert.equal(unusedValue(money("2"), start, until, new Date("2026-12-02T00:00:00Z")), 0n);
    assert.equal(
      formatMoney(unusedValue(money("2"), start, until, new Date("2026-10-01T00:00:00Z"))),
      "2.0000",
    );
    assert.equal(unusedValue(0n, start, until, start), 0n);
  });
});
