import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { money } from "../money.ts";
import { fromMinor, toMinor } from "./minor-units.ts";

describe("card amounts in a currency's smallest unit", () => {
  it("counts cents for two-decimal currencies", () => {
    assert.equal(toMinor(money("12.34"), "EUR"), 1234);
    assert.equal(fromMinor(1234, "eur"), money("12.34"));
  });

  it("counts whole units for zero-decimal currencies", () => {
    assert.equal(toMinor(money("500"), "JPY"), 500);
    assert.equal(fromMinor(500, "JPY"), money("500"));
  });

  it("refuses an amount finer than the smallest unit", () => {
    assert.equal(toMinor(money("12.345"), "EUR"), undefined);
    assert.equal(toMinor(money("500.5"), "JPY"), undefined);
  });

  it("counts ISK in hundredths but charges whole krónur only (Stripe's special case)", () => {
    assert.equal(toMinor(money("500"), "ISK"), 50000);
    assert.equal(toMinor(money("5.50"), "ISK"), undefined);
    assert.equal(fromMinor(50000, "isk"), money("500"));
  });

  it("offers no card amount in three-decimal currencies", () => {
    assert.equal(toMinor(money("1"), "KWD"), undefined);
    assert.equal(fromMinor(1000, "KWD"), undefined);
  });
});
