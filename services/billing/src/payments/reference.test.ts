import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { newReference, normaliseReference } from "./reference.ts";

describe("bank transfer references", () => {
  it("are HB- and two groups of four unambiguous characters", () => {
    for (let i = 0; i < 200; i++)
      assert.match(newReference(), /^HB-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/);
  });

  it("read back as typed in any case, spacing or dashes", () => {
    const r = newReference();
    assert.equal(normaliseReference(r.toLowerCase().replaceAll("-", " ")), r);
    assert.equal(normaliseReference(` ${r.replaceAll("-", "")} `), r);
  });

  it("read O as zero and I or L as one", () => {
    assert.equal(normaliseReference("hb-o1il-2345"), "HB-0111-2345");
  });

  it("are refused when they cannot be one", () => {
    assert.equal(normaliseReference("HB-1234"), undefined);
    assert.equal(normaliseReference("XX-1234-5678"), undefined);
    assert.equal(normaliseReference("HB-U234-5678"), undefined);
  });
});
