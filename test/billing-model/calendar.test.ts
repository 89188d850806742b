import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { sameCalendarLater } from "./money.ts";

const isLeapYear = (y: number) => new Date(Date.UTC(y, 1, 29)).getUTCDate() === 29;

describe("the paths property's second run: the same calendar, years later", () => {
  it("is four years later on the same day, and eight from a leap year whose fourth is 2100", () => {
    for (const [from, to] of [
      ["2027-01-29T12:00:00.000Z", "2031-01-29T12:00:00.000Z"],
      ["2028-02-29T12:00:00.000Z", "2032-02-29T12:00:00.000Z"],
      // Across 2100, which has no leap day: four years on is not 1461 days (that is 2101-01-30),
      // and from a leap year the next calendar alike is eight years on.
      ["2097-01-29T12:00:00.000Z", "2101-01-29T12:00:00.000Z"],
      ["2096-01-29T12:00:00.000Z", "2104-01-29T12:00:00.000Z"],
    ])
      assert.equal(sameCalendarLater(new Date(from)).toISOString(), to, from);
  });

  it("keeps the month, day and time, and which of the next three years have a leap day", () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date("2000-01-01Z"), max: new Date("2390-12-31Z"), noInvalidDate: true }),
        (d) => {
          const later = sameCalendarLater(d);
          const shift = later.getUTCFullYear() - d.getUTCFullYear();
          assert.ok(shift > 0 && shift % 4 === 0);
          assert.equal(later.toISOString().slice(4), d.toISOString().slice(4));
          for (let i = 0; i < 3; i++)
            assert.equal(isLeapYear(d.getUTCFullYear() + i), isLeapYear(later.getUTCFullYear() + i));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
