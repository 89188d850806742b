import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toJsonString } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { type ApiKey, ApiKeySchema, ApiKeyStatus } from "@hb/contracts/hb/auth/v1/api_keys_pb";
import { generateKey, KEY_MARKER, parseKey, type RequestLogRecord, streams } from "@hb/platform";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { api, auth, eventually, newAccount, newMember, unique } from "./helpers.ts";
import { serviceSql } from "./support/service-db.ts";

/** A calendar date as the contract carries it: 00:00 UTC of the day, `days` from today (UTC). */
const dayFromToday = (days: number) =>
  timestampFromDate(
    new Date(`${new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10)}T00:00:00Z`),
  );
const today = () => dayFromToday(0);
/** Every field of the keys, as JSON text. */
const asJson = (keys: ApiKey[]) => keys.map((k) => toJsonString(ApiKeySchema, k)).join("\n");
const tomorrow = () => dayFromToday(1);

describe("authentication at the gateway", () => {
  it("answers a valid key with the index: owner, label, scopes, counters and links", async () => {
    const acct = await newAccount(["services"]);
    const r = await api("GET", "/api/v1/", { key: acct.key });
    assert.equal(r.status, 200);
    assert.equal(r.body.success, true);
    assert.equal(r.body.data.owner.customer_id, acct.customerId);
    assert.equal(r.body.data.key.label, "test");
    assert.deepEqual(r.body.data.key.scopes, ["read", "services"]);
    assert.equal(r.body.data.label, "test");
    assert.deepEqual(r.body.data.scopes, ["read", "services"]);
    assert.equal(r.body.data.rate_limit.limit, 1000);
    assert.ok(r.body.data.links.docs.endsWith("/api/v1/docs"));
  });

  it("refuses every wrong Authorization header with 401 UNAUTHORIZED", async () => {
    const acct = await newAccount();
    const [, prefix, secret] = acct.key.split("_");
    const flipped = secret.slice(0, 10) + (secret[10] === "a" ? "b" : "a") + secret.slice(11);
    const cases: Array<Record<string, string>> = [
      {},
      { authorization: "" },
      { authorization: acct.key },
      { authorization: `Basic ${acct.key}` },
      { authorization: `bearer ${acct.key}` },
      { authorization: `Bearer  ${acct.key}` },
      { authorization: `Bearer ${acct.key} extra` },
      { authorization: "Bearer " },
      { authorization: `Bearer ${acct.key.slice(0, -1)}` },
      { authorization: `Bearer ${acct.key}x` },
      { authorization: `Bearer ${KEY_MARKER}_${prefix}_${flipped}` },
      { authorization: `Bearer xyz_${prefix}_${secret}` },
      { authorization: `Bearer ${KEY_MARKER}-${prefix}-${secret}` },
      { authorization: `Bearer ${"A".repeat(5000)}` },
      { authorization: "Bearer \u00e9t\u00e9" },
    ];
    for (const headers of cases) {
      const r = await api("GET", "/api/v1/", { headers });
      assert.equal(r.status, 401, JSON.stringify(headers).slice(0, 80));
      assert.deepEqual(Object.keys(r.body).sort(), ["code", "error", "success"]);
      assert.equal(r.body.code, "UNAUTHORIZED");
      assert.equal(r.body.success, false);
      assert.match(r.body.error, /^Missing or malformed Authorization header/);
    }
  });

  it("does not accept the key in the query string", async () => {
    const acct = await newAccount();
    const r = await api("GET", `/api/v1/?api_key=${acct.key}&key=${acct.key}`);
    assert.equal(r.status, 401);
    assert.equal(r.body.code, "UNAUTHORIZED");
    assert.match(r.body.error, /^Missing or malformed Authorization header/);
  });

  it("refuses a well-formed key that does not exist (valid checksum, unknown prefix)", async () => {
    const unknown = generateKey().full;
    assert.ok(parseKey(unknown), "shape and checksum are valid, so only auth can refuse it");
    const r = await api("GET", "/api/v1/", { key: unknown });
    assert.equal(r.status, 401);
    assert.equal(r.body.code, "UNAUTHORIZED");
    // auth's refusal, not the gateway's answer to a malformed header
    assert.equal(r.body.error, "Missing, malformed, unknown, expired or revoked API key");
    assert.equal(r.headers.has("x-ratelimit-limit"), false, "an unknown key has no window");
  });

  it("a revoked key is refused on the very next request", async () => {
    const acct = await newAccount();
    assert.equal((await api("GET", "/api/v1/", { key: acct.key })).status, 200);
    await auth.revokeKey({ personId: acct.ownerId, keyId: acct.keyId });
    const r = await api("GET", "/api/v1/", { key: acct.key });
    assert.equal(r.status, 401);
    assert.equal(r.body.code, "UNAUTHORIZED");
  });

  it("a key expires after its expiry date and works on it", async () => {
    const acct = await newAccount();
    const { key, secretKey } = await auth.createKey({
      personId: acct.ownerId,
      label: "expiring",
      scopes: [],
      ipAllowlist: "",
      expiresOn: today(),
    });
    assert.equal((await api("GET", "/api/v1/", { key: secretKey })).status, 200);
    assert.equal(key!.status, ApiKeyStatus.ACTIVE);
    // Expiry dates in the past cannot be set through the API, so age the key in the database.
    const sql = serviceSql("auth");
    try {
      await sql`update auth.api_keys set expires_on = current_date - 1 where id = ${key!.id}`;
    } finally {
      await sql.end();
    }
    // Gateways hear of a key's changes from auth (their key table); an edit behind auth's back
    // reaches them with the next change of the customer's keys, here a label left as it was.
    await auth.updateKey({ personId: acct.ownerId, keyId: key!.id, label: "expiring" });
    const r = await api("GET", "/api/v1/", { key: secretKey });
    assert.equal(r.status, 401);
    assert.equal(r.body.code, "UNAUTHORIZED");
    const listed = (await auth.listKeys({ personId: acct.ownerId })).keys.find((k) => k.id === key!.id)!;
    assert.equal(listed.status, ApiKeyStatus.EXPIRED);
  });

  it("sends rate-limit headers on success and on refusals, counting every request", async () => {
    const acct = await newAccount();
    await auth.updateKey({ personId: acct.ownerId, keyId: acct.keyId, ipAllowlist: "198.51.100.7" });
    const first = await api("GET", "/api/v1/", { key: acct.key });
    assert.equal(first.status, 403);
    assert.equal(first.body.code, "FORBIDDEN");
    assert.equal(first.headers.get("x-ratelimit-limit"), "1000");
    assert.equal(first.headers.get("x-ratelimit-remaining"), "999");
    const reset = Number(first.headers.get("x-ratelimit-reset"));
    assert.ok(reset > Date.now() / 1000 && reset <= Date.now() / 1000 + 3600);
    assert.match(first.headers.get("ratelimit-policy") ?? "", /q=1000;w=3600/);
    await auth.updateKey({ personId: acct.ownerId, keyId: acct.keyId, ipAllowlist: "" });
    const second = await api("GET", "/api/v1/", { key: acct.key });
    assert.equal(second.status, 200);
    assert.equal(second.headers.get("x-ratelimit-remaining"), "998");
    assert.match(second.headers.get("ratelimit") ?? "", /r=998/);
  });

  it("refuses a source outside the allowlist with 403 FORBIDDEN and ignores X-Forwarded-For", async () => {
    const acct = await newAccount();
    await auth.updateKey({
      personId: acct.ownerId,
      keyId: acct.keyId,
      ipAllowlist: "203.0.113.5, 2001:db8::/32",
    });
    const spoofed = await api("GET", "/api/v1/", {
      key: acct.key,
      headers: { "x-forwarded-for": "203.0.113.5", "x-real-ip": "203.0.113.5" },
    });
    assert.equal(spoofed.status, 403);
    assert.equal(spoofed.body.code, "FORBIDDEN");
    await auth.updateKey({ personId: acct.ownerId, keyId: acct.keyId, ipAllowlist: "127.0.0.0/8\n::1" });
    assert.equal((await api("GET", "/api/v1/", { key: acct.key })).status, 200);
  });

  it("re-reads permissions on every request: removing the last view permission refuses reads", async () => {
    const acct = await newAccount();
    const member = await newMember(acct.customerId, ["view_invoices"]);
    assert.equal((await api("GET", "/api/v1/", { key: member.key })).status, 200);
    await auth.setPermissions({ personId: member.personId, permissions: [] });
    const r = await api("GET", "/api/v1/", { key: member.key });
    assert.equal(r.status, 403);
    assert.equal(r.body.code, "FORBIDDEN");
  });

  it("refuses writes but not reads of a suspended account (checked after scope)", async () => {
    const uuid = "01a2070d-89b7-7094-b1d2-cc98e6753b5b";
    const acct = await newAccount(["services"]);
    await auth.setCustomerStatus({ customerId: acct.customerId, status: CustomerStatus.SUSPENDED });
    assert.equal((await api("GET", "/api/v1/", { key: acct.key })).status, 200);
    const write = await api("POST", `/api/v1/vps/${uuid}/start`, { key: acct.key });
    assert.deepEqual([write.status, write.body.code], [403, "ACCOUNT_SUSPENDED"]);
    const missingScope = await api("POST", `/api/v1/invoices/${uuid}/pay`, { key: acct.key, body: {} });
    assert.deepEqual([missingScope.status, missingScope.body.code], [403, "SCOPE_REQUIRED"]);
    assert.equal(missingScope.body.scope, "billing");
    await auth.setCustomerStatus({ customerId: acct.customerId, status: CustomerStatus.ACTIVE });
    const ok = await api("POST", `/api/v1/vps/${uuid}/start`, { key: acct.key });
    assert.deepEqual([ok.status, ok.body.code], [404, "NOT_FOUND"], "past the key checks");
  });

  it("checks scope before permission before suspension", async () => {
    const acct = await newAccount();
    const member = await newMember(acct.customerId, ["view_services"]);
    await auth.setCustomerStatus({ customerId: acct.customerId, status: CustomerStatus.SUSPENDED });
    const noScope = await auth.verify({
      key: member.key,
      sourceIp: "127.0.0.1",
      scope: "orders",
      isWrite: true,
    });
    assert.equal(noScope.refusal?.code, "SCOPE_REQUIRED");
    const noPerm = await auth.verify({
      key: member.key,
      sourceIp: "127.0.0.1",
      scope: "read",
      permissionsAny: ["view_invoices"],
      isWrite: true,
    });
    assert.equal(noPerm.refusal?.code, "FORBIDDEN");
  });
});

describe("key management (portal path through auth)", () => {
  it("always includes read, orders scopes canonically, and shows the full key once", async () => {
    const acct = await newAccount([]);
    const { key, secretKey } = await auth.createKey({
      personId: acct.ownerId,
      label: "ci",
      scopes: ["billing", "services"],
      ipAllowlist: "",
    });
    assert.deepEqual(key!.scopes, ["read", "services", "billing"]);
    assert.match(secretKey, new RegExp(`^${KEY_MARKER}_[0-9A-Za-z]{8}_[0-9A-Za-z]{96}$`));
    assert.equal(key!.display, `${KEY_MARKER}_${key!.prefix}_…`);
    const listed = (await auth.listKeys({ personId: acct.ownerId })).keys;
    assert.ok(!asJson(listed).includes(secretKey.split("_")[2]), "the secret is never listed");
  });

  it("refuses unknown scopes and a scope the person's role does not cover, naming the permission", async () => {
    const acct = await newAccount();
    await assert.rejects(
      auth.createKey({
        personId: acct.ownerId,
        label: "x",
        scopes: ["admin"],
        ipAllowlist: "",
      }),
      /Unknown scope "admin"/,
    );
    const member = await newMember(acct.customerId, ["view_services", "power_services"], ["services"]);
    await assert.rejects(
      auth.createKey({
        personId: member.personId,
        label: "x",
        scopes: ["billing"],
        ipAllowlist: "",
      }),
      /Pay Invoices/,
    );
    await assert.rejects(
      auth.createKey({
        personId: member.personId,
        label: "x",
        scopes: ["destructive"],
        ipAllowlist: "",
      }),
      /Cancel Services/,
    );
  });

  it("validates the allowlist entry by entry and caps it at 50", async () => {
    const acct = await newAccount();
    await assert.rejects(
      auth.createKey({
        personId: acct.ownerId,
        label: "x",
        scopes: [],
        ipAllowlist: "10.0.0.1, nonsense",
      }),
      /"nonsense" is not a valid IP address or CIDR range/,
    );
    const many = Array.from({ length: 51 }, (_, i) => `10.1.${i}.0/24`).join("\n");
    await assert.rejects(
      auth.createKey({ personId: acct.ownerId, label: "x", scopes: [], ipAllowlist: many }),
      /At most 50/,
    );
  });

  it("caps active keys per customer at 10; revoking one frees a place", async () => {
    const acct = await newAccount(); // one key already
    const ids: string[] = [];
    for (let i = 0; i < 9; i++) {
      ids.push(
        (
          await auth.createKey({
            personId: acct.ownerId,
            label: `k${i}`,
            scopes: [],
            ipAllowlist: "",
          })
        ).key!.id,
      );
    }
    await assert.rejects(
      auth.createKey({ personId: acct.ownerId, label: "11th", scopes: [], ipAllowlist: "" }),
      /maximum of 10 active keys/,
    );
    await auth.revokeKey({ personId: acct.ownerId, keyId: ids[0] });
    const r = await auth.createKey({
      personId: acct.ownerId,
      label: "after revoke",
      scopes: [],
      ipAllowlist: "",
    });
    assert.equal(r.key!.label, "after revoke");
  });

  it("edits only label, allowlist and expiry; revoked keys stay listed newest first", async () => {
    const acct = await newAccount(["services"]);
    const edited = await auth.updateKey({
      personId: acct.ownerId,
      keyId: acct.keyId,
      label: "renamed",
      ipAllowlist: "192.0.2.0/24",
      expiry: { case: "expiresOn", value: tomorrow() },
    });
    assert.equal(edited.key!.label, "renamed");
    assert.deepEqual(edited.key!.ipAllowlist, ["192.0.2.0/24"]);
    assert.deepEqual(edited.key!.expiresOn, tomorrow());
    assert.deepEqual(edited.key!.scopes, ["read", "services"]);
    const second = await auth.createKey({
      personId: acct.ownerId,
      label: "newer",
      scopes: [],
      ipAllowlist: "",
    });
    await auth.revokeKey({ personId: acct.ownerId, keyId: acct.keyId });
    const { keys } = await auth.listKeys({ personId: acct.ownerId });
    assert.deepEqual(
      keys.map((k) => [k.label, k.status]),
      [
        ["newer", ApiKeyStatus.ACTIVE],
        ["renamed", ApiKeyStatus.REVOKED],
      ],
    );
    await assert.rejects(
      auth.updateKey({ personId: acct.ownerId, keyId: acct.keyId, label: "again" }),
      /revoked/,
    );
    assert.ok(second.key);
  });

  it("refuses an expiry in the past or not at 00:00 UTC, and an empty label", async () => {
    const acct = await newAccount();
    const noon = timestampFromDate(
      new Date(`${new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10)}T12:00:00Z`),
    );
    for (const [expiresOn, why] of [
      [dayFromToday(-1), /expires_on must be today or later/],
      [noon, /expires_on must be a date \(00:00 UTC\)/],
    ] as const) {
      await assert.rejects(
        auth.createKey({ personId: acct.ownerId, label: "x", scopes: [], ipAllowlist: "", expiresOn }),
        why,
      );
    }
    await assert.rejects(
      auth.createKey({ personId: acct.ownerId, label: "   ", scopes: [], ipAllowlist: "" }),
      /label is required/,
    );
  });

  it("keeps a request log with failed calls and the key's last use", async () => {
    const acct = await newAccount();
    await api("GET", "/api/v1/", { key: acct.key });
    await auth.updateKey({ personId: acct.ownerId, keyId: acct.keyId, ipAllowlist: "198.51.100.1" });
    await api("GET", "/api/v1/?x=1", { key: acct.key });
    const entries = await eventually(async () => {
      const r = await auth.listRequestLog({ personId: acct.ownerId, keyId: acct.keyId, limit: 10 });
      return r.entries.length >= 2 ? r.entries : undefined;
    });
    assert.deepEqual(
      entries.map((e) => [e.method, e.endpoint, e.statusCode]),
      [
        ["GET", "/api/v1/", 403],
        ["GET", "/api/v1/", 200],
      ],
    );
    assert.ok(entries.every((e) => e.sourceIp.endsWith("127.0.0.1") && e.time));
    const key = await eventually(async () => {
      const k = (await auth.listKeys({ personId: acct.ownerId })).keys.find((x) => x.id === acct.keyId);
      return k?.lastUsedAt ? k : undefined;
    });
    assert.ok(key.lastUsedIp.endsWith("127.0.0.1"));
  });

  it("stores a backlog of request-log entries larger than one statement's parameters allow, endpoints exactly as sent", async () => {
    const acct = await newAccount();
    const start = Date.parse("2026-01-01T00:00:00Z");
    // 16,000 entries in 32 of the gateway's batches published back to back: the consumer takes
    // them in a few batches of many thousand entries each (8,191 rows of 8 columns is the most
    // one statement's 65,534 parameters can carry as separate values).
    const tricky = `/api/v1/vps?q="a,b"{c}\\d'é`;
    const entry = (i: number): RequestLogRecord => ({
      keyId: acct.keyId,
      customerId: acct.customerId,
      method: i % 2 ? "POST" : "GET",
      endpoint: i === 7 ? tricky : `/api/v1/n/${i}`,
      status: 200 + (i % 3),
      ip: i === 15_999 ? "203.0.113.9" : "198.51.100.7",
      at: new Date(start + i).toISOString(),
      durationMs: (i % 50) + 0.4,
    });
    const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
    try {
      const js = jetstream(nc);
      const subject = streams(process.env.HB_NS!).requestLogSubject("gateway");
      const sent: Promise<unknown>[] = [];
      for (let b = 0; b < 32; b++) {
        const batch = Array.from({ length: 500 }, (_, i) => entry(b * 500 + i));
        sent.push(js.publish(subject, JSON.stringify(batch)));
      }
      await Promise.all(sent);
    } finally {
      await nc.close();
    }
    const db = serviceSql("auth");
    try {
      await eventually(
        async () =>
          (
            await db<{ n: number }[]>`select count(*)::int as n from auth.request_log
            where key_id = ${acct.keyId} and at < '2026-01-02'`
          )[0].n === 16_000,
        30_000,
      );
      const [odd] = await db<
        { endpoint: string; method: string; status_code: number; duration_ms: number }[]
      >`
        select endpoint, method, status_code, duration_ms from auth.request_log
        where key_id = ${acct.keyId} and at = ${new Date(start + 7)}`;
      assert.deepEqual(odd, { endpoint: tricky, method: "POST", status_code: 201, duration_ms: 7 });
      const [key] = await db<{ last_used_at: Date; last_used_ip: string }[]>`
        select last_used_at, last_used_ip from auth.api_keys where id = ${acct.keyId}`;
      assert.deepEqual(key, { last_used_at: new Date(start + 15_999), last_used_ip: "203.0.113.9" });
    } finally {
      await db.end();
    }
  });

  it("lets staff view keys and logs with view clients and revoke with edit clients, never the secret", async () => {
    const acct = await newAccount();
    const viewer = (
      await auth.createStaff({ name: "V", email: `${unique("v")}@staff.test`, permissions: ["view_clients"] })
    ).staff!;
    const editor = (
      await auth.createStaff({ name: "E", email: `${unique("e")}@staff.test`, permissions: ["edit_clients"] })
    ).staff!;
    const none = (await auth.createStaff({ name: "N", email: `${unique("n")}@staff.test`, permissions: [] }))
      .staff!;
    const { keys } = await auth.staffListKeys({ staffId: viewer.id, customerId: acct.customerId });
    assert.equal(keys.length, 1);
    assert.ok(!asJson(keys).includes(acct.key.split("_")[2]));
    await assert.rejects(
      auth.staffListKeys({ staffId: none.id, customerId: acct.customerId }),
      /view clients/,
    );
    await assert.rejects(auth.staffRevokeKey({ staffId: viewer.id, keyId: acct.keyId }), /edit clients/);
    await auth.staffRevokeKey({ staffId: editor.id, keyId: acct.keyId });
    const revoked = await api("GET", "/api/v1/", { key: acct.key });
    assert.equal(revoked.status, 401);
    assert.equal(revoked.body.code, "UNAUTHORIZED");
  });
});
