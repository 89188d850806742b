import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isEmail } from "./email.ts";

describe("isEmail", () => {
  it("accepts ordinary addresses, tags, subdomains and internationalised domains", () => {
    for (const ok of ["ada@example.com", "a.b+tag@mail.example.co.uk", "x@example.test", "o@bücher.de"]) {
      assert.equal(isEmail(ok), true, ok);
    }
  });

  it("refuses addresses without a local part, an @ or a dotted domain, and pasted lists", () => {
    for (const bad of [
      "ada",
      "ada@",
      "@example.com",
      "ada@example",
      "ada@@example.com",
      "ada@exa mple.com",
      "ada@-example.com",
      "ada@example.c",
      "a@b.com, c@d.com",
      "ada..x@example.com",
      `${"a".repeat(65)}@example.com`,
    ]) {
      assert.equal(isEmail(bad), false, bad);
    }
  });
});
