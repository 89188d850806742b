import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  decideKey,
  KEY_REFUSALS,
  type KeyFacts,
  type KeyNeed,
  type ResellerFacts,
  unauthenticatedRefusal,
} from "./key-decision.ts";

const nowMs = Date.parse("2026-03-10T12:00:00Z");
const good: KeyFacts = {
  customerApiEnabled: true,
  inventoryModule: true,
  vpsModule: true,
  revoked: false,
  expired: false,
  ipAllowlist: [],
  sourceIp: "10.0.0.1",
  scopes: ["read", "services", "account"],
  permissions: ["manage_services"],
  accountSuspended: false,
  window: { count: 1, limit: 10, reset: nowMs / 1000 + 60 },
  nowMs,
};
const write: KeyNeed = { scope: "services", permissionsAny: ["manage_services"], write: true, module: "vps" };
const partner: ResellerFacts = { partnerStatus: "active" };

describe("decideKey", () => {
  it("passes a key that meets every step", () => {
    assert.equal(decideKey(good, write), undefined);
    assert.equal(decideKey(good, { ...write, scope: "account" }, partner), undefined);
  });

  it("refuses at the first failing step, in the spec's order (each row also fails every later step)", () => {
    // Every fact is bad at first; each row repairs one more, so the answer moves one step on.
    const steps: [Partial<KeyFacts>, string][] = [
      [{ customerApiEnabled: false }, "apiDisabled"],
      [{ revoked: true }, "unknownKey"],
      [{ ipAllowlist: ["192.0.2.1"] }, "allowlist"],
      [{ window: { count: 11, limit: 10, reset: nowMs / 1000 + 60 } }, "rateLimited"],
      [{ vpsModule: false }, "vpsOff"],
      [{ scopes: ["read"] }, "scope"],
      [{ permissions: ["view_services"] }, "permission"],
      [{ accountSuspended: true }, "suspended"],
    ];
    for (let i = 0; i < steps.length; i++) {
      const facts = Object.assign({}, good, ...steps.slice(i).map(([bad]) => bad)) as KeyFacts;
      const r = decideKey(facts, write);
      const name = steps[i][1] as keyof typeof KEY_REFUSALS;
      const want = KEY_REFUSALS[name];
      assert.equal(r?.code, typeof want === "function" ? want("services").code : want.code, name);
      assert.equal(r?.message, typeof want === "function" ? want("services").message : want.message);
    }
  });

  it("SCOPE_REQUIRED names the scope; RATE_LIMITED says when to retry", () => {
    assert.deepEqual(decideKey({ ...good, scopes: [] }, write), {
      code: "SCOPE_REQUIRED",
      message: "This API key lacks the services scope",
      scope: "services",
    });
    const r = decideKey({ ...good, window: { count: 11, limit: 10, reset: nowMs / 1000 + 60 } }, write);
    assert.equal(r?.retryAfterSeconds, 60);
  });

  it("the module switch that matters is the route's own", () => {
    assert.equal(decideKey({ ...good, inventoryModule: false }, write), undefined);
    assert.equal(
      decideKey({ ...good, inventoryModule: false }, { ...write, module: "inventory" }),
      KEY_REFUSALS.inventoryOff,
    );
    assert.equal(
      decideKey({ ...good, vpsModule: false, inventoryModule: false }, { ...write, module: undefined }),
      undefined,
    );
  });

  it("a suspended account keeps read access", () => {
    assert.equal(decideKey({ ...good, accountSuspended: true }, { ...write, write: false }), undefined);
  });

  it("reseller steps: partner before the scope, signature and partner status after it, then the person", () => {
    const resell: KeyNeed = { scope: "account", permissionsAny: ["manage_services"], write: true };
    assert.equal(decideKey(good, resell), KEY_REFUSALS.notPartner, "no reseller facts: refused");
    assert.equal(decideKey({ ...good, scopes: [] }, resell, { partnerStatus: "" }), KEY_REFUSALS.notPartner);
    assert.equal(
      decideKey({ ...good, scopes: [] }, resell, {
        ...partner,
        signatureProblem: "Invalid X-Reseller-Signature",
      })?.code,
      "SCOPE_REQUIRED",
    );
    assert.deepEqual(decideKey(good, resell, { partnerStatus: "active", signatureProblem: "bad" }), {
      code: "UNAUTHORIZED",
      message: "bad",
    });
    assert.equal(
      decideKey({ ...good, permissions: [] }, resell, { partnerStatus: "pending" })?.message,
      "The reseller partner profile is pending: read access only",
    );
    assert.equal(
      decideKey({ ...good, permissions: [] }, { ...resell, write: false }, { partnerStatus: "pending" }),
      KEY_REFUSALS.permission,
    );
    assert.equal(decideKey({ ...good, permissions: [] }, resell, partner), KEY_REFUSALS.permission);
    assert.equal(decideKey({ ...good, accountSuspended: true }, resell, partner), KEY_REFUSALS.suspended);
  });

  it("an unauthenticated key is 401, or FEATURE_DISABLED with the API off", () => {
    assert.equal(unauthenticatedRefusal(true).code, "UNAUTHORIZED");
    assert.equal(unauthenticatedRefusal(false).code, "FEATURE_DISABLED");
  });

  it("passes exactly when every step passes, and never passes a revoked key or one with the API off (property)", () => {
    const scopes = ["read", "services", "orders", "billing", "destructive", "account"];
    fc.assert(
      fc.property(
        fc.record({
          customerApiEnabled: fc.boolean(),
          inventoryModule: fc.boolean(),
          vpsModule: fc.boolean(),
          revoked: fc.boolean(),
          expired: fc.boolean(),
          allowed: fc.boolean(),
          scopes: fc.subarray(scopes),
          permissions: fc.subarray(["view_services", "manage_services", "cancel_services"]),
          accountSuspended: fc.boolean(),
          count: fc.integer({ min: 1, max: 12 }),
        }),
        fc.record({
          scope: fc.constantFrom("", ...scopes),
          permissionsAny: fc.subarray(["view_services", "manage_services", "cancel_services"]),
          write: fc.boolean(),
          module: fc.constantFrom(undefined, "inventory" as const, "vps" as const),
        }),
        fc.constantFrom<ResellerFacts | undefined>(undefined, { partnerStatus: "" }, partner, {
          partnerStatus: "suspended",
        }),
        (f, need, reseller) => {
          const facts: KeyFacts = {
            ...good,
            ...f,
            ipAllowlist: f.allowed ? [] : ["192.0.2.0/24"],
            window: { ...good.window, count: f.count },
          };
          const passes =
            f.customerApiEnabled &&
            !f.revoked &&
            !f.expired &&
            f.allowed &&
            f.count <= 10 &&
            (need.module !== "inventory" || f.inventoryModule) &&
            (need.module !== "vps" || f.vpsModule) &&
            (need.scope === "" || f.scopes.includes(need.scope)) &&
            (need.scope !== "account" ||
              (!!reseller?.partnerStatus && (!need.write || reseller.partnerStatus === "active"))) &&
            (need.permissionsAny.length === 0 ||
              need.permissionsAny.some((p) => f.permissions.includes(p))) &&
            !(need.write && f.accountSuspended);
          assert.equal(decideKey(facts, need, reseller) === undefined, passes);
        },
      ),
    );
  });
});
