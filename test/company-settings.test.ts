import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type OwnStack, ownStack } from "./own-stack.ts";

// Company-wide settings change the behaviour for everyone, so this file runs its own stack.
describe("company-wide settings", () => {
  let s: OwnStack;
  let key = "";
  let ownerId = "";
  const get = async (path = "/api/v1/", k = key) => {
    const res = await fetch(s.stack.gatewayUrl + path, { headers: { authorization: `Bearer ${k}` } });
    return { status: res.status, headers: res.headers, body: (await res.json()) as { code: string } };
  };

  before(async () => {
    s = await ownStack("settings");
    const { owner } = await s.auth.createCustomer({ name: "S", email: "s@example.test", currency: "EUR" });
    ownerId = owner!.id;
    key = (
      await s.auth.createKey({
        personId: ownerId,
        label: "k",
        scopes: ["services"],
        ipAllowlist: "",
        expiresOn: "",
      })
    ).secretKey;
  });
  after(async () => {
    await s?.close();
  });

  it("defaults: API on, 1,000 requests an hour, 10 keys, modules on", async () => {
    const { settings } = await s.auth.getSettings({});
    assert.deepEqual(
      {
        on: settings!.customerApiEnabled,
        hourly: settings!.hourlyRequestLimit,
        keys: settings!.activeKeyLimit,
        inventory: settings!.inventoryModule,
        vps: settings!.vpsModule,
      },
      { on: true, hourly: 1000, keys: 10, inventory: true, vps: true },
    );
  });

  it("switching the Customer API off refuses every request with 403 FEATURE_DISABLED at once", async () => {
    await s.auth.updateSettings({ customerApiEnabled: false });
    try {
      const r = await get();
      assert.equal(r.status, 403);
      assert.equal(r.body.code, "FEATURE_DISABLED");
      assert.equal(
        (await fetch(`${s.stack.gatewayUrl}/api/v1/docs`)).status,
        200,
        "documentation stays readable",
      );
    } finally {
      await s.auth.updateSettings({ customerApiEnabled: true });
    }
    assert.equal((await get()).status, 200);
  });

  it("a module switched off refuses its routes with FEATURE_DISABLED after scope checks pass", async () => {
    await s.auth.updateSettings({ inventoryModule: false, vpsModule: false });
    try {
      const inv = await s.auth.verify({ key, sourceIp: "127.0.0.1", scope: "read", module: "inventory" });
      assert.equal(inv.refusal?.code, "FEATURE_DISABLED");
      const vps = await s.auth.verify({ key, sourceIp: "127.0.0.1", scope: "read", module: "vps" });
      assert.equal(vps.refusal?.code, "FEATURE_DISABLED");
      const other = await s.auth.verify({ key, sourceIp: "127.0.0.1", scope: "read" });
      assert.equal(other.refusal, undefined);
    } finally {
      await s.auth.updateSettings({ inventoryModule: true, vpsModule: true });
    }
    const inv = await s.auth.verify({ key, sourceIp: "127.0.0.1", scope: "read", module: "inventory" });
    assert.equal(inv.refusal, undefined);
  });

  it("the hourly window refuses with 429 RATE_LIMITED and Retry-After once the company limit is used", async () => {
    const fresh = (
      await s.auth.createKey({ personId: ownerId, label: "rl", scopes: [], ipAllowlist: "", expiresOn: "" })
    ).secretKey;
    await s.auth.updateSettings({ hourlyRequestLimit: 3 });
    try {
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await get("/api/v1/", fresh)).status);
      assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
      const r = await get("/api/v1/", fresh);
      assert.equal(r.body.code, "RATE_LIMITED");
      assert.equal(r.headers.get("x-ratelimit-limit"), "3");
      assert.equal(r.headers.get("x-ratelimit-remaining"), "0");
      const retryAfter = Number(r.headers.get("retry-after"));
      assert.ok(retryAfter >= 1 && retryAfter <= 3600, `Retry-After ${retryAfter}`);
    } finally {
      await s.auth.updateSettings({ hourlyRequestLimit: 1000 });
    }
    assert.equal((await get("/api/v1/", fresh)).status, 200, "same window, higher limit");
  });

  it("a company key limit other than 10 applies", async () => {
    await s.auth.updateSettings({ activeKeyLimit: 3 });
    try {
      const { activeCount } = await s.auth.listKeys({ personId: ownerId });
      for (let i = activeCount; i < 3; i++) {
        await s.auth.createKey({
          personId: ownerId,
          label: `k${i}`,
          scopes: [],
          ipAllowlist: "",
          expiresOn: "",
        });
      }
      await assert.rejects(
        s.auth.createKey({ personId: ownerId, label: "over", scopes: [], ipAllowlist: "", expiresOn: "" }),
        /maximum of 3 active keys/,
      );
    } finally {
      await s.auth.updateSettings({ activeKeyLimit: 10 });
    }
  });

  it("refuses out-of-range settings", async () => {
    await assert.rejects(s.auth.updateSettings({ hourlyRequestLimit: 0 }), /hourly_request_limit/);
    await assert.rejects(s.auth.updateSettings({ activeKeyLimit: -1 }), /active_key_limit/);
  });
});
