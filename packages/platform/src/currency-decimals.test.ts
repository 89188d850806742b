import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cardDecimals, cardUnit, currencyDecimals } from "./currency-decimals.ts";
import { BILLING_CURRENCIES } from "./iso-codes.ts";

/**
 * Where the card provider's decimals are not ISO 4217's, and why. A currency that starts to differ
 * (a table edited on one side only) fails the test below until it is named here.
 */
const CARD_DIFFERS: Record<string, { iso: number; card: number | undefined; why: string }> = {
  BHD: {
    iso: 3,
    card: undefined,
    why: "three-decimal: Stripe wants the last digit 0, so cards are not offered",
  },
  JOD: { iso: 3, card: undefined, why: "three-decimal: not offered by card" },
  KWD: { iso: 3, card: undefined, why: "three-decimal: not offered by card" },
  OMR: { iso: 3, card: undefined, why: "three-decimal: not offered by card" },
  TND: { iso: 3, card: undefined, why: "three-decimal: not offered by card" },
  IQD: { iso: 3, card: 2, why: "not on Stripe's three-decimal list: its API's default of two decimals" },
  LYD: { iso: 3, card: 2, why: "not on Stripe's three-decimal list: its API's default of two decimals" },
  MGA: { iso: 2, card: 0, why: "ISO's minor unit is a fifth (iraimbilanja), so Stripe counts whole ariary" },
  UYI: { iso: 0, card: 2, why: "a bond index unit, not on Stripe's zero-decimal list" },
};

// Intl's list lacks a few ISO codes (UYI), so the named ones are looked at too.
const everyCurrency = [
  ...new Set([...Intl.supportedValuesOf("currency"), ...BILLING_CURRENCIES, ...Object.keys(CARD_DIFFERS)]),
];

describe("currency decimals: ISO 4217 and the card provider side by side", () => {
  it("agree on every currency but the ones named, which differ as named", () => {
    const differing: Record<string, { iso: number; card: number | undefined }> = {};
    for (const c of everyCurrency) {
      const iso = currencyDecimals(c);
      const card = cardDecimals(c);
      if (iso !== card) differing[c] = { iso, card };
    }
    const named = Object.fromEntries(
      Object.entries(CARD_DIFFERS).map(([c, d]) => [c, { iso: d.iso, card: d.card }]),
    );
    assert.deepEqual(differing, named);
  });

  it("agree on every currency the platform bills in, so a bank transfer's amount is a card's too", () => {
    for (const c of BILLING_CURRENCIES) assert.equal(cardDecimals(c), currencyDecimals(c), c);
  });

  it("show every billed currency with the decimals the locale data shows it with", () => {
    for (const c of BILLING_CURRENCIES) {
      const shown = new Intl.NumberFormat("en", { style: "currency", currency: c }).resolvedOptions();
      assert.equal(currencyDecimals(c), shown.minimumFractionDigits, c);
    }
  });

  it("charges ISK in whole krónur though Stripe's API counts hundredths", () => {
    assert.equal(currencyDecimals("ISK"), 0);
    assert.deepEqual(cardUnit("isk"), { charged: 0, counted: 2 });
  });

  it("reads a code in either case and takes no card amount in what is not a code", () => {
    assert.equal(currencyDecimals("jpy"), 0);
    assert.equal(cardDecimals("eur"), 2);
    assert.equal(cardUnit("EURO"), undefined);
    assert.equal(currencyDecimals("XYZ"), 2);
  });
});
