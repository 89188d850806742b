import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { PortalService, Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import type { OwnStack } from "./own-stack.ts";
import { csrfIn, PASSWORD, signInVisitor } from "./portal-pages.ts";
import { stackClient } from "./support/clients.ts";
import { companyStack } from "./support/company-stack.ts";

// Company-wide settings change the behaviour for everyone, so this suite runs on the company-wide
// stack (test/company-wide.test.ts), and puts back every setting it changes.
describe("company-wide settings", () => {
  let s: OwnStack;
  let key = "";
  let ownerId = "";
  const get = async (path = "/api/v1/", k = key) => {
    const res = await fetch(s.stack.gatewayUrl + path, { headers: { authorization: `Bearer ${k}` } });
    return { status: res.status, headers: res.headers, body: (await res.json()) as { code: string } };
  };

  before(async () => {
    s = await companyStack();
    const { owner } = await s.auth.createCustomer({ name: "S", email: "s@example.test", currency: "EUR" });
    ownerId = owner!.id;
    key = (
      await s.auth.createKey({
        personId: ownerId,
        label: "k",
        scopes: ["services"],
        ipAllowlist: "",
      })
    ).secretKey;
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
      // Missing, malformed and unknown keys, on real and unknown routes alike.
      for (const headers of [{}, { authorization: "Bearer nonsense" }, { authorization: `Bearer ${key}x` }]) {
        for (const path of ["/api/v1/", "/api/v1/services", "/api/v1/nope"]) {
          const res = await fetch(s.stack.gatewayUrl + path, { headers });
          const body = (await res.json()) as { code: string };
          assert.deepEqual(
            [res.status, body.code],
            [403, "FEATURE_DISABLED"],
            `${path} ${JSON.stringify(headers)}`,
          );
        }
      }
      const unknownRoute = await get("/api/v1/nope");
      assert.deepEqual([unknownRoute.status, unknownRoute.body.code], [403, "FEATURE_DISABLED"]);
      assert.equal(
        (await fetch(`${s.stack.gatewayUrl}/api/v1/docs`)).status,
        200,
        "documentation stays readable",
      );
    } finally {
      await s.auth.updateSettings({ customerApiEnabled: true });
    }
    assert.equal((await get()).status, 200);
    const missing = await fetch(`${s.stack.gatewayUrl}/api/v1/`);
    assert.deepEqual(
      [missing.status, ((await missing.json()) as { code: string }).code],
      [401, "UNAUTHORIZED"],
      "switched back on, a missing key is 401 again",
    );
  });

  it("a module switched off refuses its routes with 403 FEATURE_DISABLED; other routes still answer", async () => {
    const uuid = "01a2070d-89b7-7094-b1d2-cc98e6753b5b";
    await s.auth.updateSettings({ inventoryModule: false, vpsModule: false });
    try {
      for (const path of [
        "/api/v1/dedicated",
        `/api/v1/dedicated/${uuid}`,
        `/api/v1/vps/${uuid}/snapshots`,
      ]) {
        const r = await get(path);
        assert.deepEqual([r.status, r.body.code], [403, "FEATURE_DISABLED"], path);
      }
      assert.equal((await get("/api/v1/vps")).status, 200, "the VPS list is not part of the VPS module");
    } finally {
      await s.auth.updateSettings({ inventoryModule: true, vpsModule: true });
    }
    assert.equal((await get("/api/v1/dedicated")).status, 200);
    const snapshots = await get(`/api/v1/vps/${uuid}/snapshots`);
    assert.deepEqual([snapshots.status, snapshots.body.code], [404, "NOT_FOUND"], "past the module check");
  });

  it("the hourly window refuses with 429 RATE_LIMITED and Retry-After once the company limit is used", async () => {
    const fresh = (await s.auth.createKey({ personId: ownerId, label: "rl", scopes: [], ipAllowlist: "" }))
      .secretKey;
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
        });
      }
      await assert.rejects(
        s.auth.createKey({ personId: ownerId, label: "over", scopes: [], ipAllowlist: "" }),
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

  // The portal and the admin panel on this stack: the switch hides the API Keys page.
  let portalHandle: ReturnType<typeof stackClient<[typeof PortalService]>> | undefined;
  const portal = () => {
    portalHandle ??= stackClient(s.stack.env, [PortalService], "AUTH_ADDR");
    return portalHandle.client;
  };
  after(() => portalHandle?.close());

  const withPassword = async (realm: Realm, subjectId: string) => {
    const { token } = await portal().createPasswordLink({ realm, subjectId });
    await portal().setPassword({ token, password: PASSWORD });
  };

  it("switched off in Settings, the API Keys page leaves the menu and its routes are refused; on again, it is back", async () => {
    const { owner } = await s.auth.createCustomer({
      name: "Switch Owner",
      email: "switch-owner@example.test",
    });
    await withPassword(Realm.PORTAL, owner!.id);
    const { staff } = await s.auth.createStaff({
      name: "Switch Staff",
      email: "switch-staff@example.test",
      permissions: ["view_clients", "edit_clients"],
    });
    await withPassword(Realm.ADMIN, staff!.id);
    const base = s.stack.gatewayUrl;
    const customer = await signInVisitor(base, "portal", "switch-owner@example.test");
    const admin = await signInVisitor(base, "admin", "switch-staff@example.test");

    const before = await customer.get("/portal/keys");
    assert.equal(before.status, 200);
    assert.match(before.text, /href="\/portal\/keys"/);
    const csrf = csrfIn(before.text);

    const settings = await admin.get("/admin/settings");
    const saveSwitch = (on: boolean) =>
      admin.post("/admin/settings", {
        _csrf: csrfIn(settings.text),
        ...(on ? { api: "on" } : {}),
        hourly: "1000",
        keys: "10",
        inventory: "on",
        vps: "on",
      });
    assert.equal((await saveSwitch(false)).status, 303);

    const hidden = await customer.get("/portal/keys");
    assert.equal(hidden.status, 404);
    assert.match(hidden.text, /The API Keys page is not available/);
    assert.doesNotMatch(hidden.text, /href="\/portal\/keys"/);
    const team = await customer.get("/portal/team");
    assert.doesNotMatch(team.text, /href="\/portal\/keys"/);
    const create = await customer.post("/portal/keys", { _csrf: csrf, label: "while off" });
    assert.equal(create.status, 404);
    assert.equal((await s.auth.listKeys({ personId: owner!.id })).keys.length, 0);

    assert.equal((await saveSwitch(true)).status, 303);
    assert.equal((await customer.get("/portal/keys")).status, 200);
  });

  it("an out-of-range limit is refused beside its field with the range, and nothing changes", async () => {
    const { staff } = await s.auth.createStaff({
      name: "Limit Staff",
      email: "limit-staff@example.test",
      permissions: ["view_clients", "edit_clients"],
    });
    await withPassword(Realm.ADMIN, staff!.id);
    const admin = await signInVisitor(s.stack.gatewayUrl, "admin", "limit-staff@example.test");
    const page = await admin.get("/admin/settings");
    const r = await admin.post("/admin/settings", {
      _csrf: csrfIn(page.text),
      api: "on",
      hourly: "1000",
      keys: "5000",
    });
    assert.equal(r.status, 400);
    assert.match(r.text, /id="f-keys-error">active_key_limit must be between 1 and 1000/);
    assert.match(r.text, /id="f-keys"[^>]*value="5000"/);
    assert.equal((await s.auth.getSettings({})).settings?.activeKeyLimit, 10);
  });
});
