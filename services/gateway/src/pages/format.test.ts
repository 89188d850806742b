import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { dayStart } from "./format.ts";

describe("dayStart", () => {
  it("reads a calendar date of the years 0001 to 9999 as 00:00 UTC", () => {
    for (const d of ["0001-01-01", "2028-02-29", "9999-12-31"]) {
      const t = dayStart(d);
      assert.ok(t, d);
      assert.equal(timestampDate(t).toISOString(), `${d}T00:00:00.000Z`);
    }
  });

  it("refuses the year 0000, impossible days and other shapes", () => {
    for (const d of [
      "0000-01-01",
      "2027-02-29",
      "2027-02-31",
      "2027-13-01",
      "2027-1-1",
      "27-01-01",
      "",
      "tomorrow",
    ]) {
      assert.equal(dayStart(d), undefined, d);
    }
  });
});
