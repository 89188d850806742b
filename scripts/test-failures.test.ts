import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describeError } from "./test-failures.ts";

describe("the failed-test digest", () => {
  it("shows the test's own error (node:test's cause) without the runner's frames", () => {
    const own = new Error("condition not met within 20000 ms");
    own.stack = [
      "Error: condition not met within 20000 ms",
      "    at eventually (file:///r/test/support/eventually.ts:22:9)",
      "    at Test.runInAsyncScope (node:async_hooks:214:14)",
      "    at async Suite.processPendingSubtests (node:internal/test_runner/test:788:7)",
      "    at new Promise (<anonymous>)",
    ].join("\n");
    const wrapped = Object.assign(new Error("test failed"), { cause: own, failureType: "testCodeFailure" });
    assert.equal(
      describeError(wrapped),
      "Error: condition not met within 20000 ms\n    at eventually (file:///r/test/support/eventually.ts:22:9)",
    );
  });

  it("keeps at most twelve lines, and prints what is not an Error as text", () => {
    const long = new Error("x");
    long.stack = Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n");
    assert.equal(describeError(long).split("\n").length, 12);
    assert.equal(describeError({ cause: "a string was thrown" }), "a string was thrown");
  });
});
