import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import type { ValidateFunction } from "ajv/dist/2020.js";
import { contractViolation, keptValidatorFile } from "./contract.ts";
import { eventually, GATEWAY, newAccount } from "./helpers.ts";

/** The contract check every system test's answers go through (test/contract.ts). */
describe("the contract check of the system tests", () => {
  it("accepts an answer as the gateway sends it, and names one whose body or status strays from the operation", async () => {
    const res = await fetch(`${GATEWAY}/api/v1/account/balance`);
    const body: unknown = await res.json();
    assert.equal(res.status, 401);
    assert.equal(await contractViolation(GATEWAY, "GET", "/api/v1/account/balance", 401, body), undefined);

    const strayed = await contractViolation(GATEWAY, "GET", "/api/v1/account/balance", 401, { error: 7 });
    assert.match(strayed ?? "", /^GET \/account\/balance 401: the answer does not match its schema/);

    const undocumented = await contractViolation(GATEWAY, "GET", "/api/v1/account/balance", 418, body);
    assert.match(undocumented ?? "", /answered 418, which the contract does not document/);
  });

  it("checks each operation against its own schema, and leaves a path that is no operation alone", async () => {
    // Two real answers, each right for its own operation and wrong for the other's: each status of
    // each operation has a validator of its own, compiled when first needed.
    const { key } = await newAccount();
    const read = async (path: string) => {
      const res = await fetch(`${GATEWAY}/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(res.status, 200);
      return (await res.json()) as unknown;
    };
    const balance = await read("/account/balance");
    const services = await read("/services");
    assert.equal(await contractViolation(GATEWAY, "GET", "/api/v1/account/balance", 200, balance), undefined);
    assert.equal(await contractViolation(GATEWAY, "GET", "/api/v1/services", 200, services), undefined);
    const crossed = [
      await contractViolation(GATEWAY, "GET", "/api/v1/services", 200, balance),
      await contractViolation(GATEWAY, "GET", "/api/v1/account/balance", 200, services),
    ];
    assert.match(crossed[0] ?? "", /^GET \/services 200: the answer does not match its schema/);
    assert.match(crossed[1] ?? "", /^GET \/account\/balance 200: the answer does not match its schema/);
    assert.equal(await contractViolation(GATEWAY, "GET", "/api/v1/no-such-thing", 404, {}), undefined);
  });

  it("keeps a validator it compiled for the run's other test processes, judging as it did", async () => {
    const res = await fetch(`${GATEWAY}/api/v1/account/balance`);
    const body: unknown = await res.json();
    assert.equal(await contractViolation(GATEWAY, "GET", "/api/v1/account/balance", 401, body), undefined);
    // Written beside the check (or by another process before it): another process imports it.
    const file = await keptValidatorFile(GATEWAY, "GET", "/account/balance", 401);
    await eventually(async () => existsSync(file), 10_000, 50);
    const kept = ((await import(pathToFileURL(file).href)) as { default: ValidateFunction }).default;
    assert.equal(kept(body), true);
    assert.equal(kept({ error: 7 }), false);
  });
});
