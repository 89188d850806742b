import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { hasPlaceholderWord, productionSecretProblems } from "./production-secrets.ts";

describe("productionSecretProblems", () => {
  it("names every secret setting by its name, whichever service declares it", () => {
    const problems = productionSecretProblems({
      KEY_PEPPER: "x".repeat(40),
      WEBHOOK_SECRET: "changeme-please-0123456789abcdefgh",
    });
    assert.deepEqual(
      problems.map((p) => p.split(":")[0]),
      ["KEY_PEPPER", "WEBHOOK_SECRET"],
    );
  });

  it("checks a URL's password and leaves a URL without one alone", () => {
    assert.deepEqual(
      productionSecretProblems({ REDIS_URL: "redis://redis:6379", NATS_URL: "nats://nats:4222" }),
      [],
    );
    assert.match(
      productionSecretProblems({ REDIS_URL: "redis://:short@redis:6379" })[0] ?? "",
      /REDIS_URL: its password/,
    );
  });

  it("leaves settings that are not secrets alone", () => {
    assert.deepEqual(
      productionSecretProblems({ PUBLIC_URL: "https://api.example.com", LOG_LEVEL: "info" }),
      [],
    );
  });

  it("accepts any random value of 32 bytes or more that holds no placeholder word", () => {
    // The bytes are fast-check's, so a failure names its seed and can be run again. A random value
    // can hold a placeholder word by chance (about 3 in a million of these): that one is refused,
    // which the next test shows, and is left out here.
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 64 }), (bytes) => {
        const value = Buffer.from(bytes).toString("base64");
        fc.pre(!hasPlaceholderWord(value));
        return productionSecretProblems({ KEY_PEPPER: value }).length === 0;
      }),
      { numRuns: 200 },
    );
  });

  it("refuses a random value that holds a placeholder word, and takes 'todo' only as a word of its own", () => {
    // 33 random bytes, fixed so that the test cannot meet a placeholder by chance.
    const random = "kR3vX9pLm2QwZs8T1bYcN4uH7eJd6aGf0oVi5yKxWqE+Bn7";
    assert.match(productionSecretProblems({ KEY_PEPPER: `${random}dummy` })[0] ?? "", /placeholder/);
    assert.match(productionSecretProblems({ KEY_PEPPER: `TODO-${random}` })[0] ?? "", /placeholder/);
    assert.match(productionSecretProblems({ KEY_PEPPER: `${random}/todo` })[0] ?? "", /placeholder/);
    // CI's counterexample had "todo" between other characters of a random value.
    assert.deepEqual(productionSecretProblems({ KEY_PEPPER: `Xq9${random}aToDo7Zk` }), []);
  });
});
