import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import fc from "fast-check";
import { productionSecretProblems } from "./production-secrets.ts";

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

  it("accepts any random value of 32 bytes or more", () => {
    fc.assert(
      fc.property(fc.integer({ min: 32, max: 64 }), (n) => {
        const value = randomBytes(n).toString("base64");
        return productionSecretProblems({ KEY_PEPPER: value }).length === 0;
      }),
      { numRuns: 200 },
    );
  });
});
