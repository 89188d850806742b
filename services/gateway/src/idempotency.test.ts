import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { parseJsonBody } from "./body.ts";
import { canonicalJson } from "./idempotency.ts";

/** The text of a value with every object's keys in the order `order` picks. */
function reordered(value: unknown, order: (keys: string[]) => string[]): string {
  if (Array.isArray(value)) return `[${value.map((v) => reordered(v, order)).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const o = value as Record<string, unknown>;
    return `{${order(Object.keys(o))
      .map((k) => `${JSON.stringify(k)}: ${reordered(o[k], order)}`)
      .join(", ")}}`;
  }
  return JSON.stringify(value);
}

describe("canonicalJson", () => {
  it("is the same text for the same value whatever the order and spacing of its keys (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.boolean(), (value, reverse) => {
        const a = parseJsonBody(reordered(value, (keys) => keys));
        const b = parseJsonBody(
          reordered(value, (keys) => (reverse ? [...keys].reverse() : [...keys].sort())),
        );
        assert.equal(canonicalJson(a), canonicalJson(b));
      }),
      { numRuns: 300 },
    );
  });

  it("keeps array order and numbers as written, so different requests stay different", () => {
    const c = (text: string) => canonicalJson(parseJsonBody(text));
    assert.equal(c('{"b":1,"a":{"y":[2,1],"x":"s"}}'), '{"a":{"x":"s","y":[2,1]},"b":1}');
    assert.notEqual(c('{"a":[1,2]}'), c('{"a":[2,1]}'));
    assert.notEqual(c('{"amount":10}'), c('{"amount":10.0}'));
    assert.notEqual(c('{"amount":10}'), c('{"amount":"10"}'));
    assert.equal(c('{"amount":0.07,"note":null}'), c('{ "note" : null , "amount" : 0.07 }'));
  });
});
