import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { KeyEntrySchema, KeySettingsSchema } from "@hb/contracts/hb/auth/v1/key_distribution_pb";
import fc from "fast-check";
import { checkKey, expired, type Need, unauthenticated } from "./key-check.ts";

const now = Date.parse("2026-03-10T12:00:00Z");
const settings = (over: Partial<Record<string, unknown>> = {}) =>
  create(KeySettingsSchema, {
    customerApiEnabled: true,
    hourlyRequestLimit: 10,
    inventoryModule: true,
    vpsModule: true,
    ...over,
  });
const key = (over: Partial<Record<string, unknown>> = {}) =>
  create(KeyEntrySchema, {
    prefix: "aaaaaaaa",
    keyId: "k",
    scopes: ["read", "services"],
    accountStatus: CustomerStatus.ACTIVE,
    ...over,
  });
const window = (count: number) => ({
  limit: 10,
  count,
  remaining: Math.max(0, 10 - count),
  reset: now / 1000 + 60,
});
const need = (over: Partial<Need> = {}): Need => ({
  scope: "read",
  permissionsAny: [],
  write: false,
  ...over,
});
const code = (...args: Parameters<typeof checkKey>) => checkKey(...args)?.code;

describe("checkKey", () => {
  it("passes a good key", () => {
    assert.equal(checkKey(key(), settings(), need(), [], "10.0.0.1", window(1), now), undefined);
  });

  it("refuses in auth's order: switch, revoked/expired, allowlist, rate, module, scope, permission, suspension", () => {
    const all = key({
      revoked: true,
      ipAllowlist: ["192.0.2.1"],
      scopes: ["read"],
      accountStatus: CustomerStatus.SUSPENDED,
    });
    const off = settings({ customerApiEnabled: false, vpsModule: false });
    const n = need({ scope: "services", permissionsAny: ["manage_services"], write: true, module: "vps" });
    const steps: [string, ReturnType<typeof key>, ReturnType<typeof settings>, number][] = [
      ["FEATURE_DISABLED", all, off, 11],
      ["UNAUTHORIZED", all, settings({ vpsModule: false }), 11],
      ["FORBIDDEN", key({ ...all, revoked: false }), settings({ vpsModule: false }), 11],
      ["RATE_LIMITED", key({ ...all, revoked: false, ipAllowlist: [] }), settings({ vpsModule: false }), 11],
      [
        "FEATURE_DISABLED",
        key({ ...all, revoked: false, ipAllowlist: [] }),
        settings({ vpsModule: false }),
        1,
      ],
      ["SCOPE_REQUIRED", key({ ...all, revoked: false, ipAllowlist: [] }), settings(), 1],
      ["FORBIDDEN", key({ ...all, revoked: false, ipAllowlist: [], scopes: ["services"] }), settings(), 1],
    ];
    for (const [want, k, s, count] of steps) {
      assert.equal(code(k, s, n, [], "10.0.0.1", window(count), now), want);
    }
    const suspended = key({ accountStatus: CustomerStatus.SUSPENDED, scopes: ["services"] });
    assert.equal(
      code(suspended, settings(), n, ["manage_services"], "::1", window(1), now),
      "ACCOUNT_SUSPENDED",
    );
    assert.equal(
      code(suspended, settings(), { ...n, write: false }, ["manage_services"], "::1", window(1), now),
      undefined,
    );
  });

  it("a rate-limited answer says when to retry", () => {
    const r = checkKey(key(), settings(), need(), [], "10.0.0.1", window(11), now);
    assert.equal(r?.retryAfterSeconds, 60);
  });

  it("never passes a revoked key, a key with the API off, or a key out of its window (property)", () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.boolean(),
        fc.integer({ min: 1, max: 30 }),
        fc.constantFrom("read", "services", "orders", ""),
        fc.boolean(),
        (revoked, on, count, scope, write) => {
          const r = checkKey(
            key({ revoked, scopes: ["read", "services", "orders"] }),
            settings({ customerApiEnabled: on }),
            need({ scope, write }),
            [],
            "10.0.0.1",
            window(count),
            now,
          );
          assert.equal(r === undefined, !revoked && on && count <= 10);
        },
      ),
    );
  });
});

describe("expired", () => {
  it("a key works through the whole of its last day (UTC) and not after", () => {
    const day = (d: string) => ({ seconds: BigInt(Date.parse(`${d}T00:00:00Z`) / 1000) });
    assert.equal(expired(key({ expiresOn: day("2026-03-10") }), now), false);
    assert.equal(expired(key({ expiresOn: day("2026-03-09") }), now), true);
    assert.equal(expired(key({ expiresOn: day("2026-03-10") }), Date.parse("2026-03-11T00:00:00Z")), true);
    assert.equal(expired(key(), now), false);
  });
});

describe("unauthenticated", () => {
  it("is 401 with the API on and FEATURE_DISABLED with it off", () => {
    assert.equal(unauthenticated(settings()).code, "UNAUTHORIZED");
    assert.equal(unauthenticated(settings({ customerApiEnabled: false })).code, "FEATURE_DISABLED");
  });
});
