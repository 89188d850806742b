import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { resolveError } from "./errors.ts";
import { BILLING_CURRENCIES, billingCurrency, COUNTRY_CODE_COUNT, countryCode } from "./iso-codes.ts";

const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    const r = resolveError(err);
    return { code: r.code, field: r.info?.violations[0]?.field, message: r.message };
  }
  assert.fail("accepted");
};

describe("ISO codes", () => {
  it("knows the 249 assigned ISO 3166-1 alpha-2 countries, each a region ICU names", () => {
    assert.equal(COUNTRY_CODE_COUNT, 249);
    const names = new Intl.DisplayNames(["en"], { type: "region", fallback: "none" });
    for (const code of ["DE", "US", "GB", "AX", "SS", "CW"]) assert.equal(countryCode("country", code), code);
    assert.ok(names.of("DE"));
  });

  it("refuses three letters, user-assigned codes and lower case, naming the field", () => {
    for (const code of ["ZZZ", "ZZ", "XK", "EU", "UK", "de", "D", ""]) {
      const r = refusal(() => countryCode("country", code));
      assert.deepEqual([r.code, r.field], ["BAD_REQUEST", "country"], code);
    }
  });

  it("bills in upper-case ISO 4217 codes of its list only", () => {
    for (const code of BILLING_CURRENCIES) {
      assert.equal(billingCurrency("currency", code), code);
      assert.ok(Intl.supportedValuesOf("currency").includes(code), `${code} is ISO 4217`);
    }
    assert.match(
      refusal(() => billingCurrency("currency", "eur")).message,
      /upper-case ISO 4217 code: EUR, not eur/,
    );
    for (const code of ["XYZ", "XAU", "EURO", ""]) {
      assert.match(
        refusal(() => billingCurrency("currency", code)).message,
        /currencies the platform bills in/,
      );
    }
  });
});
