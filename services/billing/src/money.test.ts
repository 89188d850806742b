import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  addCycle,
  CYCLE_MONTHS,
  formatMoney,
  money,
  monthlyEquivalent,
  nthDueDate,
  parseMoney,
  toNumber,
} from "./money.ts";

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

  // Issue 28 §2: each due date comes from the anchor (the first term's day), never from the
  // previous clamped date.
  const chain = (start: string, cycle: string, terms: number) => {
    const anchor = new Date(start);
    const dates: string[] = [];
    let due = anchor;
    for (let i = 0; i < terms; i++) {
      due = addCycle(due, cycle, anchor.getUTCDate());
      dates.push(due.toISOString().slice(0, 10));
    }
    return dates;
  };
  it("keeps a term on its anchor day: Jan 31 monthly reads Feb 28, Mar 31, Apr 30, May 31", () => {
    assert.deepEqual(chain("2026-01-31T09:00:00Z", "monthly", 4), [
      "2026-02-28",
      "2026-03-31",
      "2026-04-30",
      "2026-05-31",
    ]);
    assert.deepEqual(chain("2025-12-31T00:00:00Z", "quarterly", 4), [
      "2026-03-31",
      "2026-06-30",
      "2026-09-30",
      "2026-12-31",
    ]);
    assert.deepEqual(chain("2024-02-29T00:00:00Z", "annually", 4), [
      "2025-02-28",
      "2026-02-28",
      "2027-02-28",
      "2028-02-29",
    ]);
  });
  it("property: after any number of renewals the n-th due date is anchor + n cycles, clamped", () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date("2000-01-01T00:00:00Z"),
          max: new Date("2090-12-31T23:59:59Z"),
          noInvalidDate: true,
        }),
        fc.constantFrom(...Object.keys(CYCLE_MONTHS)),
        fc.integer({ min: 1, max: 60 }),
        (anchor, cycle, terms) => {
          let due = anchor;
          for (let n = 1; n <= terms; n++) {
            due = addCycle(due, cycle, anchor.getUTCDate());
            const expected = nthDueDate(anchor, cycle, n);
            if (due.getTime() !== expected.getTime()) return false;
            // On the anchor day, or the month's last day when the month is shorter; same time of day.
            const last = new Date(Date.UTC(due.getUTCFullYear(), due.getUTCMonth() + 1, 0)).getUTCDate();
            if (due.getUTCDate() !== Math.min(anchor.getUTCDate(), last)) return false;
            if (due.getTime() % 86_400_000 !== anchor.getTime() % 86_400_000) return false;
          }
          return true;
        },
      ),
      { numRuns: 500 },
    );
  });
});
