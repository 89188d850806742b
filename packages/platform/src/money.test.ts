import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { currencyDecimals } from "./currency-decimals.ts";
import { resolveError } from "./errors.ts";
import { BILLING_CURRENCIES } from "./iso-codes.ts";
import {
  displayMoney,
  FORMATTED_MONEY,
  formatMoney,
  MONEY_REFUSAL,
  parseMoney,
  readMoney,
  readPositiveMoney,
  requestedMoney,
} from "./money.ts";

// Every amount a column holds: 14 whole digits and 4 decimals, either sign.
const LIMIT = 10n ** 18n - 1n;
const units = fc.bigInt({ min: -LIMIT, max: LIMIT });
const currency = fc.constantFrom(...BILLING_CURRENCIES);
const refusals = new Set<string>(Object.values(MONEY_REFUSAL));

describe("money", () => {
  it("reads back every amount it writes, in the spec's form and as people are shown it", () => {
    fc.assert(
      fc.property(units, currency, (u, cur) => {
        const written = formatMoney(u);
        assert.match(written, FORMATTED_MONEY);
        assert.equal(parseMoney(written), u);
        const [shown, code] = displayMoney(u, cur).split(" ");
        assert.equal(code, cur);
        assert.equal(parseMoney(shown), u);
        const decimals = shown.split(".")[1] ?? "";
        assert.ok(decimals.length >= currencyDecimals(cur) && decimals.length <= 4, shown);
      }),
    );
  });

  it("reads a decimal however its zeros are written", () => {
    fc.assert(
      fc.property(units, fc.nat(3), fc.nat(3), (u, lead, trail) => {
        const [whole, fraction] = formatMoney(u).replace("-", "").split(".");
        const text = `${u < 0n ? "-" : ""}${"0".repeat(lead)}${whole}.${fraction}${"0".repeat(trail)}`;
        assert.equal(parseMoney(text), u);
      }),
    );
  });

  it("refuses more than 4 decimals, exponent forms, more than 14 whole digits and other text, saying which", () => {
    const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^[0-9]{${min},${max}}$`));
    const cases = fc.oneof(
      fc
        .tuple(digits(1, 6), digits(4, 8), fc.integer({ min: 1, max: 9 }))
        .map(([w, f, last]) => [`${w}.${f}${last}`, MONEY_REFUSAL.decimals] as const),
      fc
        .tuple(digits(1, 3), fc.constantFrom("e", "E"), fc.integer({ min: -9, max: 9 }))
        .map(([w, e, x]) => [`${w}${e}${x}`, MONEY_REFUSAL.exponent] as const),
      fc
        .tuple(fc.integer({ min: 1, max: 9 }), digits(14, 20))
        .map(([first, rest]) => [`${first}${rest}`, MONEY_REFUSAL.tooLarge] as const),
      fc
        .string()
        .filter((s) => !/^-?\d+(\.\d+)?$/.test(s) && !/[eE]/.test(s))
        .map((s) => [s, MONEY_REFUSAL.notDecimal] as const),
    );
    fc.assert(
      fc.property(cases, ([text, why]) => {
        const read = readMoney(text);
        assert.deepEqual(read, { ok: false, refusal: why }, text);
      }),
    );
  });

  it("asks for more than zero when an amount is to be paid, refusing a minus sign first", () => {
    fc.assert(
      fc.property(units, (u) => {
        const read = readPositiveMoney(formatMoney(u));
        if (u > 0n) assert.deepEqual(read, { ok: true, units: u });
        else assert.deepEqual(read, { ok: false, refusal: MONEY_REFUSAL.notPositive });
      }),
    );
    assert.deepEqual(readPositiveMoney("-1e2"), { ok: false, refusal: MONEY_REFUSAL.notPositive });
    for (const text of ["", " . ", "1,00", "--1", "NaN", "12."]) {
      const read = readMoney(text);
      assert.ok(!read.ok && refusals.has(read.refusal), text);
    }
  });

  it("reads an amount exactly as written: a blank around it is not an amount (issue 28 §3)", () => {
    for (const text of [" 5", "5 ", "\t5", "5\n", " 1.50 ", "- 5"])
      assert.deepEqual(
        readMoney(text),
        { ok: false, refusal: MONEY_REFUSAL.notDecimal },
        JSON.stringify(text),
      );
    assert.deepEqual(readPositiveMoney(" -5"), { ok: false, refusal: MONEY_REFUSAL.notDecimal });
  });

  it("shows each currency with its own decimals", () => {
    assert.equal(displayMoney(125_000n, "EUR"), "12.50 EUR");
    assert.equal(displayMoney(12_000_000n, "JPY"), "1200 JPY");
    assert.equal(displayMoney(70n, "EUR"), "0.007 EUR");
    assert.equal(displayMoney(-40n), "-0.004");
  });

  it("refuses a request's amount with 400 in the reader's words, naming the field", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), units.map(formatMoney)), (text) => {
        const read = readPositiveMoney(text);
        let thrown: unknown;
        try {
          assert.equal(requestedMoney(text, "amount", readPositiveMoney), read.ok ? read.units : undefined);
        } catch (err) {
          thrown = err;
        }
        if (read.ok) return assert.equal(thrown, undefined);
        const r = resolveError(thrown);
        assert.equal(r.status, 400);
        assert.equal(r.message, `amount ${read.refusal}`);
        assert.deepEqual(
          r.info?.violations.map((v) => [v.field, v.message]),
          [["amount", read.refusal]],
        );
      }),
    );
  });
});
