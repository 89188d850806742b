import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { provisionRetryDelay } from "./provisioning.ts";

describe("provisioning retry back-off", () => {
  it("doubles from the base after each failure", () => {
    assert.deepEqual(
      [1, 2, 3, 4].map((n) => provisionRetryDelay(n, 300)),
      [300, 600, 1200, 2400],
    );
  });
  it("never waits longer than the cap, however many failures", () => {
    assert.equal(provisionRetryDelay(50, 300), 60_000);
    assert.equal(provisionRetryDelay(1_000_000, 300, 5_000), 5_000);
  });
});
