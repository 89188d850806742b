import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { z } from "zod";
import { loadConfig } from "./config.ts";
import { type TestSwitchName, testSwitches, testSwitchProblems } from "./test-switches.ts";

const names = Object.keys(testSwitches) as TestSwitchName[];
/** Each switch's spellings of "off", which production accepts. */
const off: Record<TestSwitchName, string[]> = {
  BILLING_CLOCK_CONTROL: ["false"],
  SIM_FAILURES: ["", "0", "false"],
  STRIPE_API_BASE: [],
};
const on: Record<TestSwitchName, string> = {
  BILLING_CLOCK_CONTROL: "true",
  SIM_FAILURES: "1",
  STRIPE_API_BASE: "http://127.0.0.1:12111",
};
const named = (problems: string[]) => problems.map((p) => p.split(":")[0]);

describe("testSwitchProblems", () => {
  it("names every switch that is on, and none that is off or unset", () => {
    assert.deepEqual(named(testSwitchProblems(on)), names);
    for (const name of names) {
      for (const value of off[name]) assert.deepEqual(testSwitchProblems({ [name]: value }), [], name);
    }
    assert.deepEqual(testSwitchProblems({ PATH: "/usr/bin", SIM_BUILD_MS: "3000" }), []);
  });

  it("refuses a value its own service would refuse, without echoing it", () => {
    assert.deepEqual(named(testSwitchProblems({ BILLING_CLOCK_CONTROL: "yes" })), ["BILLING_CLOCK_CONTROL"]);
    assert.deepEqual(named(testSwitchProblems({ STRIPE_API_BASE: "" })), ["STRIPE_API_BASE"]);
  });

  it("names exactly the switches on, and never a value, whatever the values", () => {
    const value = fc.oneof(fc.string(), fc.constantFrom("", "0", "1", "true", "false", "http://u:p@h:1"));
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...names), value), (env) => {
        const problems = testSwitchProblems(env);
        const expected = names.filter((n) => env[n] !== undefined && !off[n].includes(env[n]!));
        assert.deepEqual(named(problems), expected);
        for (const n of expected) {
          const line = problems.find((p) => p.startsWith(`${n}:`))!;
          // The line is the same whatever the value: it cannot carry any of it.
          assert.equal(line, testSwitchProblems({ [n]: on[n] })[0]);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("loadConfig and the test switches", () => {
  const shape = { BILLING_CLOCK_CONTROL: testSwitches.BILLING_CLOCK_CONTROL.schema };

  it("refuses a switch that is on with NODE_ENV=production, even in a service that does not read it", () => {
    assert.throws(
      () => loadConfig(shape, { NODE_ENV: "production", BILLING_CLOCK_CONTROL: "true" }),
      /BILLING_CLOCK_CONTROL: a test switch .*\(NODE_ENV=production\)/,
    );
    assert.throws(
      () => loadConfig({ LOG_LEVEL: z.string().optional() }, { NODE_ENV: "production", SIM_FAILURES: "1" }),
      /SIM_FAILURES: a test switch/,
    );
  });

  it("accepts it outside production, and production with it off", () => {
    assert.equal(loadConfig(shape, { BILLING_CLOCK_CONTROL: "true" }).BILLING_CLOCK_CONTROL, true);
    assert.equal(
      loadConfig(shape, { NODE_ENV: "production", BILLING_CLOCK_CONTROL: "false" }).BILLING_CLOCK_CONTROL,
      false,
    );
  });
});
