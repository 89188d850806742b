import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { api, GATEWAY, newAccount } from "./helpers.ts";

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
    for (const [method, path] of [
      ["GET", "/api/v1/nope"],
      ["DELETE", "/api/v1/"],
      ["GET", "/api/v2/"],
      ["GET", "/"],
      ["GET", `/api/v1/${"x".repeat(4000)}`],
      ["GET", "/api/v1/%E0%A4%A"],
      ["GET", "/api/v1/..%2f..%2fetc%2fpasswd"],
    ]) {
      const r = await api(method, path, { key: acct.key });
      assert.ok(r.status === 404 || r.status === 400, `${method} ${path.slice(0, 40)} → ${r.status}`);
      assert.equal(r.body?.success, false);
    }
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

  it("never answers a 500 to odd input on keyed routes", async () => {
    const acct = await newAccount();
    const bodies = [
      "null",
      "[]",
      '"text"',
      "123",
      "true",
      '{"__proto__":{"x":1}}',
      "\u0000",
      "{}".repeat(1000),
    ];
    for (const rawBody of bodies) {
      const r = await api("POST", "/api/v1/", {
        key: acct.key,
        rawBody,
        headers: { "content-type": "application/json" },
      });
      assert.ok(r.status < 500, `${JSON.stringify(rawBody).slice(0, 30)} → ${r.status}`);
      assert.equal(typeof r.body?.success, "boolean");
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

  it("renders the reference as HTML with no external assets", async () => {
    const res = await fetch(`${GATEWAY}/api/v1/docs`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /text\/html/);
    const html = await res.text();
    assert.match(html, /<code>\/api\/v1\/<\/code>/);
    assert.doesNotMatch(html, /<script[^>]+src=|<link[^>]+href="https?:/);
  });

  it("serves the Markdown guide", async () => {
    const res = await fetch(`${GATEWAY}/api/v1/guide.md`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /text\/markdown/);
    assert.match(await res.text(), /Authorization: Bearer/);
  });
});

describe("bad-input corpus on real routes", () => {
  it("answers wrong types, odd ids and odd query strings with 4xx and the envelope, never 5xx", async () => {
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
        assert.ok(r.status === 400 || r.status === 404, `${base}${id.slice(0, 20)} → ${r.status}`);
        assert.equal(r.body?.success, false);
      }
    }
    const bodies: Array<[string, string, unknown]> = [
      ["POST", "/api/v1/orders", { productId: 42, billingCycle: ["monthly"] }],
      ["POST", "/api/v1/orders", { items: "all of them" }],
      ["POST", "/api/v1/orders", { items: [null, 1, "x"] }],
      ["POST", `/api/v1/invoices/${uuid}/pay`, { amount: "lots" }],
      ["POST", `/api/v1/invoices/${uuid}/pay`, { amount: 1e308 }],
      ["POST", `/api/v1/vps/${uuid}/password`, { password: 12345678 }],
      ["POST", `/api/v1/vps/${uuid}/reinstall`, { image_id: { $ne: "" }, password: true }],
      ["POST", "/api/v1/ssh-keys", { name: ["a"], publicKey: null }],
      ["POST", `/api/v1/services/${uuid}/cancel`, { immediate: "yes please" }],
      [
        "POST",
        `/api/v1/services/${uuid}/options`,
        { optionId: uuid, billingType: "recurring", quantity: -5 },
      ],
      ["POST", `/api/v1/services/${uuid}/upgrades/options`, { addOptions: "x", removeOptions: {} }],
      ["GET", "/api/v1/services?limit=abc&page=-1", undefined],
      ["GET", "/api/v1/vps?limit=1e3&page=1.5", undefined],
      ["GET", "/api/v1/invoices?status=maybe", undefined],
    ];
    for (const [method, path, body] of bodies) {
      const r = await api(method, path, { key: acct.key, body });
      assert.ok(
        r.status >= 400 && r.status < 500,
        `${method} ${path} ${JSON.stringify(body)} → ${r.status} ${r.text.slice(0, 120)}`,
      );
      assert.equal(r.body?.success, false);
      assert.equal(typeof r.body?.code, "string");
    }
    const big = await api("GET", "/api/v1/services?limit=999999", { key: acct.key });
    assert.equal(big.status, 200);
    assert.equal(big.body.data.pagination.limit, 200);
  });
});
