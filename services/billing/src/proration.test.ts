import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatMoney, money } from "./money.ts";
import { prorate, remainingShare } from "./proration.ts";

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
  it("never exceeds the full difference when the period has not started", () => {
    const due = new Date("2026-12-01T00:00:00Z");
    assert.equal(remainingShare(due, "monthly", new Date("2026-01-01T00:00:00Z")), 1_000_000n);
  });
});
