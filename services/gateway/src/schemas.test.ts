import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatMoney, readPositiveMoney } from "@hb/platform/money";
import fc from "fast-check";
import { moneyAmount } from "./schemas.ts";

describe("a request's money amount", () => {
  it("is read by the platform's reader and refused in its words", () => {
    const amounts = fc.oneof(
      fc.string(),
      fc.bigInt({ min: -(10n ** 19n), max: 10n ** 19n }).map(formatMoney),
      fc.double({ noNaN: true }).map(String),
    );
    fc.assert(
      fc.property(amounts, (text) => {
        const read = readPositiveMoney(text);
        const parsed = moneyAmount.safeParse(text);
        if (read.ok) assert.deepEqual(parsed, { success: true, data: formatMoney(read.units) });
        else
          assert.deepEqual(
            parsed.error?.issues.map((i) => i.message),
            [read.refusal],
          );
      }),
    );
  });
});
