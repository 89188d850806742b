import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { RECHECK_MS } from "../job-loop.ts";
import { MIN_RECHECK_MS, opRecheckMs } from "./recheck.ts";

describe("how soon a job waiting on an LXD operation is asked again", () => {
  const at = 1_800_000_000_000;

  it("is half the operation's age, never under MIN_RECHECK_MS nor over RECHECK_MS, and never sooner for an older operation", () => {
    fc.assert(
      fc.property(fc.nat(3_600_000), fc.nat(3_600_000), (a, b) => {
        const [younger, older] = a <= b ? [a, b] : [b, a];
        const wait = (age: number) => opRecheckMs({ op: "op", op_at: at - age }, at);
        for (const age of [younger, older]) {
          assert.ok(wait(age) >= MIN_RECHECK_MS && wait(age) <= RECHECK_MS, `${age} ms: ${wait(age)}`);
          if (age >= 2 * MIN_RECHECK_MS && age <= 2 * RECHECK_MS)
            assert.equal(wait(age), Math.round(age / 2));
        }
        assert.ok(wait(younger) <= wait(older));
      }),
    );
  });

  it("asks a just-started operation again after MIN_RECHECK_MS and a long one after RECHECK_MS", () => {
    assert.equal(opRecheckMs({ op: "op", op_at: at }, at), MIN_RECHECK_MS);
    assert.equal(opRecheckMs({ op: "op", op_at: at - 600 }, at), 300);
    assert.equal(opRecheckMs({ op: "op", op_at: at - 60_000 }, at), RECHECK_MS);
  });

  it("keeps a second for a job that waits on no operation, or on one kept before its start was recorded", () => {
    assert.equal(opRecheckMs({}, at), RECHECK_MS);
    assert.equal(opRecheckMs({ op_at: at - 600 }, at), RECHECK_MS);
    assert.equal(opRecheckMs({ op: "op" }, at), RECHECK_MS);
  });
});
