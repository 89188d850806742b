import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { generateKey } from "@hb/platform";
import { api, GATEWAY, newAccount } from "./helpers.ts";
import { rawExchange } from "./support/raw-exchange.ts";

function assertEnvelope(r: { status: number; body: unknown; text: string }, status: number, code: string) {
  assert.equal(r.status, status, r.text.slice(0, 200));
  const body = r.body as { success: boolean; code: string; error: string };
  assert.equal(body.success, false);
  assert.equal(body.code, code);
  assert.equal(typeof body.error, "string");
}

describe("gateway edge: envelope on every answer", () => {
  it("answers unknown routes and methods with 404 NOT_FOUND in the envelope", async () => {
    const acct = await newAccount();
    const cases: Array<[string, string, boolean]> = [
      // [method, path, under the API prefix: key checked and counted, rate-limit headers sent]
      ["GET", "/api/v1/nope", true],
      ["DELETE", "/api/v1/", true],
      ["GET", `/api/v1/${"x".repeat(4000)}`, true],
      ["GET", "/api/v1/..%2f..%2fetc%2fpasswd", true],
      ["GET", "/api/v2/", false],
      ["GET", "/", false],
    ];
    for (const [method, path, keyed] of cases) {
      const r = await api(method, path, { key: acct.key });
      assertEnvelope(r, 404, "NOT_FOUND");
      assert.equal(r.headers.has("x-ratelimit-remaining"), keyed, `${method} ${path.slice(0, 40)}`);
    }
  });

  it("answers a malformed percent-encoding in the path with 400 BAD_REQUEST or 404 in the envelope", async () => {
    const acct = await newAccount();
    const r = await api("GET", "/api/v1/%E0%A4%A", { key: acct.key });
    assertEnvelope(r, 404, "NOT_FOUND");
    const id = await api("GET", "/api/v1/services/%E0%A4%A", { key: acct.key });
    assertEnvelope(id, 400, "BAD_REQUEST");
  });

  it("refuses broken JSON with 400 BAD_REQUEST and huge bodies with 413", async () => {
    const acct = await newAccount();
    assertEnvelope(
      await api("POST", "/api/v1/", { key: acct.key, rawBody: "{not json" }),
      400,
      "BAD_REQUEST",
    );
    assertEnvelope(
      await api("POST", "/api/v1/", {
        key: acct.key,
        rawBody: '{"a":1',
        headers: { "content-type": "application/json" },
      }),
      400,
      "BAD_REQUEST",
    );
    const huge = JSON.stringify({ blob: "x".repeat(2 * 1024 * 1024) });
    assertEnvelope(
      await api("POST", "/api/v1/", {
        key: acct.key,
        rawBody: huge,
        headers: { "content-type": "application/json" },
      }),
      413,
      "PAYLOAD_TOO_LARGE",
    );
  });

  it("refuses odd bodies on real routes with 400 BAD_REQUEST, never a 500", async () => {
    const acct = await newAccount();
    const uuid = "01a2070d-89b7-7094-b1d2-cc98e6753b5b";
    const bodies: Array<[string, string[] | undefined]> = [
      // [raw body, fields named in details (undefined: not JSON, so no details)]
      ["null", ["body"]],
      ["[]", ["body"]],
      ['"text"', ["body"]],
      ["123", ["body"]],
      ["true", ["body"]],
      ['{"__proto__":{"x":1}}', ["body"]],
      ["\u0000", undefined],
      ["{}".repeat(1000), undefined],
    ];
    for (const [path, rawBody, fields] of [
      ...bodies.map(([b, f]) => ["/api/v1/orders", b, f] as const),
      ...bodies.slice(0, 5).map(([b, f]) => [`/api/v1/services/${uuid}/cancel`, b, f] as const),
    ]) {
      const r = await api("POST", path, {
        key: acct.key,
        rawBody,
        headers: { "content-type": "application/json" },
      });
      assertEnvelope(r, 400, "BAD_REQUEST");
      assert.deepEqual(
        r.body.details?.map((d: { field: string }) => d.field),
        fields,
        `${path} ${JSON.stringify(rawBody).slice(0, 30)}`,
      );
    }
  });

  it("ignores a key in the query string and any session cookie", async () => {
    const acct = await newAccount();
    const r = await api("GET", `/api/v1/?access_token=${acct.key}`, {
      headers: { cookie: `session=${acct.key}` },
    });
    assertEnvelope(r, 401, "UNAUTHORIZED");
  });
});

describe("documentation routes (no key needed)", () => {
  it("serves the OpenAPI 3.1 document describing every route", async () => {
    const r = await api("GET", "/api/v1/openapi.json");
    assert.equal(r.status, 200);
    assert.equal(r.body.openapi, "3.1.0");
    assert.ok(r.body.paths["/"].get);
    assert.equal(r.body.paths["/"].get["x-required-scope"], "read");
    assert.ok(r.body.paths["/docs"].get);
    assert.deepEqual(r.body.paths["/openapi.json"].get.security, []);
  });

  it("serves the Markdown guide", async () => {
    const res = await fetch(`${GATEWAY}/api/v1/guide.md`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /text\/markdown/);
    assert.match(await res.text(), /Authorization: Bearer/);
  });
});

describe("bad-input corpus on real routes", () => {
  it("answers wrong types, odd ids and odd query strings with 400 BAD_REQUEST naming each field", async () => {
    const acct = await newAccount();
    const uuid = "01a2070d-89b7-7094-b1d2-cc98e6753b5b";
    const odd = [
      "0",
      "-1",
      "null",
      "undefined",
      "%00",
      "' or 1=1 --",
      "x".repeat(300),
      "../../etc",
      "😀",
      uuid.toUpperCase().replace(/-/g, ""),
    ];
    const paths = [
      "/api/v1/vps/",
      "/api/v1/services/",
      "/api/v1/invoices/",
      "/api/v1/orders/",
      "/api/v1/jobs/",
      "/api/v1/upgrades/",
    ];
    for (const base of paths) {
      for (const id of odd) {
        const r = await api("GET", base + encodeURIComponent(id), { key: acct.key });
        assertEnvelope(r, 400, "BAD_REQUEST");
        assert.deepEqual(
          r.body.details.map((d: { field: string }) => d.field),
          ["id"],
          `${base}${id.slice(0, 20)}`,
        );
      }
    }
    const bodies: Array<[string, string, unknown, string[]]> = [
      // [method, path, body, fields named in details]
      ["POST", "/api/v1/orders", { productId: 42, billingCycle: ["monthly"] }, ["productId", "billingCycle"]],
      ["POST", "/api/v1/orders", { items: "all of them" }, ["items"]],
      ["POST", "/api/v1/orders", { items: [null, 1, "x"] }, ["items.0", "items.1", "items.2"]],
      ["POST", `/api/v1/invoices/${uuid}/pay`, { amount: "lots" }, ["amount"]],
      ["POST", `/api/v1/invoices/${uuid}/pay`, { amount: 1e308 }, ["amount"]],
      ["POST", `/api/v1/vps/${uuid}/password`, { password: 12345678 }, ["password"]],
      [
        "POST",
        `/api/v1/vps/${uuid}/reinstall`,
        { image_id: { $ne: "" }, password: true },
        ["image_id", "password"],
      ],
      ["POST", "/api/v1/ssh-keys", { name: ["a"], publicKey: null }, ["name", "publicKey"]],
      ["POST", `/api/v1/services/${uuid}/cancel`, { immediate: "yes please" }, ["immediate"]],
      [
        "POST",
        `/api/v1/services/${uuid}/options`,
        { optionId: uuid, billingType: "recurring", quantity: -5 },
        ["quantity"],
      ],
      [
        "POST",
        `/api/v1/services/${uuid}/upgrades/options`,
        { addOptions: "x", removeOptions: {} },
        ["addOptions", "removeOptions"],
      ],
      ["GET", "/api/v1/services?limit=abc&page=-1", undefined, ["page", "limit"]],
      ["GET", "/api/v1/vps?limit=1e3&page=1.5", undefined, ["page"]],
      ["GET", "/api/v1/invoices?status=maybe", undefined, ["status"]],
    ];
    for (const [method, path, body, fields] of bodies) {
      const r = await api(method, path, { key: acct.key, body });
      const what = `${method} ${path} ${JSON.stringify(body)}`;
      assert.equal(r.status, 400, `${what} → ${r.status} ${r.text.slice(0, 200)}`);
      assert.equal(r.body.code, "BAD_REQUEST", what);
      assert.deepEqual(
        r.body.details.map((d: { field: string }) => d.field),
        fields,
        `${what}: ${r.text.slice(0, 300)}`,
      );
    }
    const big = await api("GET", "/api/v1/services?limit=999999", { key: acct.key });
    assert.equal(big.status, 200);
    assert.equal(big.body.data.pagination.limit, 200);
  });
});

describe("request ids and the authentication challenge", () => {
  it("returns a well-formed X-Request-Id as sent, and a new one otherwise, on every answer", async () => {
    const acct = await newAccount();
    const kept = await api("GET", "/api/v1/", { key: acct.key, headers: { "x-request-id": "job-42.run:7" } });
    assert.equal(kept.headers.get("x-request-id"), "job-42.run:7");
    const refused = await api("GET", "/api/v1/", { headers: { "x-request-id": "bad id\twith spaces" } });
    const made = refused.headers.get("x-request-id") ?? "";
    assert.match(made, /^req_[0-9a-f-]{36}$/);
    const another = await api("GET", "/api/v1/openapi.json");
    assert.match(another.headers.get("x-request-id") ?? "", /^req_/);
    assert.notEqual(another.headers.get("x-request-id"), made);
  });

  it("answers 401 with a Bearer WWW-Authenticate challenge", async () => {
    const r = await api("GET", "/api/v1/account", { headers: { authorization: "Basic abc" } });
    assert.equal(r.status, 401);
    assert.equal(r.body.code, "UNAUTHORIZED");
    assert.match(r.headers.get("www-authenticate") ?? "", /^Bearer realm="api"/);
  });
});

describe("a body without a well-formed key", () => {
  it("is answered 401 before the body is read, and the connection closed", async () => {
    const { hostname, port } = new URL(GATEWAY);
    // The headers promise a large body (under the limit) of which only a byte is ever sent: an
    // answer can only come from a gateway that did not wait for the body.
    const answer = await rawExchange(hostname, Number(port), [
      "POST /api/v1/orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer hbk_not_a_key\r\n" +
        "Content-Type: application/json\r\nContent-Length: 900000\r\n\r\n{",
    ]);
    assert.match(answer.text, /^HTTP\/1\.1 401/, answer.text.slice(0, 200) || "no answer within 5 s");
    assert.match(answer.text, /"code":"UNAUTHORIZED"/);
    assert.ok(answer.closed, "the connection is closed");
  });
});

describe("a body with a well-formed key that does not exist", () => {
  it("is answered 401 from the key table before the body is read, and the connection closed", async () => {
    const { hostname, port } = new URL(GATEWAY);
    // Shape and checksum are right, so only a look-up can refuse it: the key table's, without
    // waiting for the 900 kB the headers promise.
    const answer = await rawExchange(hostname, Number(port), [
      `POST /api/v1/orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${generateKey().full}\r\n` +
        "Content-Type: application/json\r\nContent-Length: 900000\r\n\r\n{",
    ]);
    assert.match(answer.text, /^HTTP\/1\.1 401/, answer.text.slice(0, 200) || "no answer within 5 s");
    assert.match(answer.text, /"code":"UNAUTHORIZED"/);
    assert.ok(answer.closed, "the connection is closed");
  });
});
