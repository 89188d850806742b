import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { exceedsDepth, numberSource, parseJsonBody } from "./body.ts";
import { exactNumbers, moneyAmount } from "./schemas.ts";

describe("exceedsDepth", () => {
  it("counts only brackets outside strings, escaped quotes included", () => {
    assert.equal(exceedsDepth('{"a":"[[[[[[","b":"\\"[[[["}', 1), false);
    assert.equal(exceedsDepth('{"a":[1]}', 1), true);
    assert.equal(exceedsDepth('{"a":[1]}', 2), false);
  });

  it("handles a 1 MB run of brackets without recursion", () => {
    assert.equal(exceedsDepth("[".repeat(1_000_000), 32), true);
  });
});

describe("parseJsonBody", () => {
  it("keeps the exact source text of numbers, per holder and key", () => {
    const body = parseJsonBody('{"amount": 0.0700, "n": [1e-2], "x": {"amount": 1.00000000000000001}}') as {
      n: unknown[];
      x: unknown;
    };
    assert.equal(numberSource(body, "amount"), "0.0700");
    assert.equal(numberSource(body.n, "0"), "1e-2");
    assert.equal(numberSource(body.x, "amount"), "1.00000000000000001");
    assert.equal(numberSource(body, "n"), undefined);
  });
});

describe("moneyAmount", () => {
  const schema = exactNumbers(["amount"], z.object({ amount: moneyAmount }));
  const parse = (text: string) => schema.safeParse(parseJsonBody(text));

  it("gives billing a 4-decimal string read from the exact text", () => {
    for (const [text, out] of [
      ['{"amount": 0.07}', "0.0700"],
      ['{"amount": "2.01"}', "2.0100"],
      ['{"amount": "007.5"}', "7.5000"],
      ['{"amount": "1.50000"}', "1.5000"],
      ['{"amount": 12345678901234.9999}', "12345678901234.9999"],
    ] as const) {
      const r = parse(text);
      assert.equal(r.success && r.data.amount, out, text);
    }
  });

  it("refuses what a float would have rounded into range", () => {
    assert.equal(parse('{"amount": 1.00000000000000001}').success, false);
    assert.equal(parse('{"amount": 0.00001}').success, false);
  });
});
