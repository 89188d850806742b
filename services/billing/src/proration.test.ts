import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { formatMoney, money, nthDueDate } from "./money.ts";
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

/**
 * Month-end anchors (issue 28 §2): a service whose first term started on the 29th–31st has due
 * dates clamped per month (Jan 31 → Feb 28 → Mar 31 → Apr 30), each worked out from the anchor,
 * never from the previous clamped date. What is left of the paid time must be measured on those
 * same terms: the term `now` falls in is the one the due dates bound, not one walked back from a
 * clamped date (from Apr 30 that would start Mar 30, a day before the term did).
 */
describe("the share left on a service anchored at a month's end", () => {
  const CYCLES = ["monthly", "quarterly", "semiannually", "annually"] as const;
  /** Due dates of a service anchored at `anchor`: anchor + n cycles, each from the anchor. */
  const dueDates = (anchor: Date, cycle: string, count: number) =>
    Array.from({ length: count }, (_, n) => nthDueDate(anchor, cycle, n));
  /** A service's terms, the one `now` falls in, and how many are paid ahead of it. */
  const service = fc
    .record({
      year: fc.integer({ min: 2026, max: 2030 }),
      month: fc.integer({ min: 0, max: 11 }),
      day: fc.integer({ min: 1, max: 31 }),
      hour: fc.integer({ min: 0, max: 23 }),
      cycle: fc.constantFrom(...CYCLES),
      term: fc.integer({ min: 0, max: 14 }),
      ahead: fc.integer({ min: 0, max: 3 }),
      at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
    })
    // The anchor's day is its own: the 31st only in a month that has one (else it would not be one).
    .filter((r) => r.day <= new Date(Date.UTC(r.year, r.month + 1, 0)).getUTCDate())
    .map((r) => {
      const anchor = new Date(Date.UTC(r.year, r.month, r.day, r.hour));
      const due = dueDates(anchor, r.cycle, r.term + r.ahead + 2);
      const [start, end] = [due[r.term], due[r.term + 1]];
      const now = new Date(start.getTime() + Math.floor(r.at * (end.getTime() - start.getTime())));
      return { ...r, anchorDay: r.day, start, end, now, paidUntil: due[r.term + 1 + r.ahead] };
    });

  it("is the whole terms paid ahead plus the share left of the term now falls in, on the anchor's terms", () => {
    fc.assert(
      fc.property(service, (s) => {
        const share = remainingShare(s.paidUntil, s.cycle, s.now, s.anchorDay);
        const part = (s.end.getTime() - s.now.getTime()) / (s.end.getTime() - s.start.getTime());
        const want = BigInt(s.ahead) * 1_000_000n + BigInt(Math.round(part * 1_000_000));
        assert.equal(
          share,
          want,
          `${s.cycle} anchored ${s.anchorDay}: ${s.start.toISOString()}–${s.end.toISOString()} at ${s.now.toISOString()}`,
        );
      }),
      { numRuns: 2000 },
    );
  });

  it("a change and its reverse at the same instant never return more than they charge, nor charge more than the difference for the time left", () => {
    const price = fc.bigInt({ min: 0n, max: 10_000_000n });
    fc.assert(
      fc.property(service, price, price, (s, a, b) => {
        const share = remainingShare(s.paidUntil, s.cycle, s.now, s.anchorDay);
        const up = prorate(a, b, share);
        const down = prorate(b, a, share);
        assert.ok(up + down >= 0n, "flipping back and forth makes no money");
        assert.ok(up + down <= 1n, "and costs at most the rounding of one ten-thousandth");
        // The exact difference for the time left, in ten-thousandths scaled by a million.
        const exact = (b - a) * share;
        assert.ok(up * 1_000_000n - exact < 1_000_000n && exact - up * 1_000_000n <= 500_000n);
        assert.ok(share <= BigInt(s.ahead + 1) * 1_000_000n, "never more than the terms paid");
      }),
      { numRuns: 1000 },
    );
  });
});
