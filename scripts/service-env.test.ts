import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { serviceEnv } from "./service-env.ts";

describe("a service's environment", () => {
  const base = { KEY_PEPPER: "p".repeat(32), DATABASE_URL: "postgres://x", HB_NS: "hb" };

  it("gives the key pepper to auth", () => {
    assert.equal(serviceEnv("auth", base).KEY_PEPPER, base.KEY_PEPPER);
  });

  it("gives the key pepper to no other process", () => {
    for (const name of ["gateway", "billing", "compute", "webhooks"]) {
      assert.equal(serviceEnv(name, base).KEY_PEPPER, undefined, name);
      assert.equal(serviceEnv(name, base).DATABASE_URL, base.DATABASE_URL, name);
    }
  });

  it("gives the payment provider's secrets to billing alone", () => {
    const withStripe = { ...base, STRIPE_SECRET_KEY: "sk_test_x", STRIPE_WEBHOOK_SECRET: "whsec_x" };
    assert.equal(serviceEnv("billing", withStripe).STRIPE_SECRET_KEY, "sk_test_x");
    assert.equal(serviceEnv("billing", withStripe).STRIPE_WEBHOOK_SECRET, "whsec_x");
    for (const name of ["gateway", "auth", "compute", "webhooks"]) {
      assert.equal(serviceEnv(name, withStripe).STRIPE_SECRET_KEY, undefined, name);
      assert.equal(serviceEnv(name, withStripe).STRIPE_WEBHOOK_SECRET, undefined, name);
    }
  });
});
