import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { formatMoney, parseMoney } from "@hb/platform/money";
import fc from "fast-check";
import { dayStart, money } from "./format.ts";

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

describe("money", () => {
  it("always names the currency and reads back as the exact amount, with at least the currency's decimals", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }),
        fc.constantFrom("EUR", "USD", "JPY", "ISK"),
        (units, currency) => {
          const shown = money(formatMoney(units), currency);
          const [amount, cur] = shown.split(" ");
          assert.equal(cur, currency);
          assert.equal(parseMoney(amount), units, shown);
          const decimals = amount.split(".")[1]?.length ?? 0;
          assert.ok(decimals >= (currency === "JPY" || currency === "ISK" ? 0 : 2), shown);
        },
      ),
    );
  });

  it("shows cents as cents and sub-cent digits only where the amount has them", () => {
    assert.equal(money("488.0000", "EUR"), "488.00 EUR");
    assert.equal(money(12.5, "EUR"), "12.50 EUR");
    assert.equal(money("488.0007", "EUR"), "488.0007 EUR");
    assert.equal(money(undefined, "EUR"), "—");
  });
});
