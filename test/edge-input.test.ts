import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { DocumentKind } from "@hb/contracts/hb/billing/v1/documents_pb";
import {
  type ApiResponse,
  addCredit,
  amountOf,
  api,
  auth,
  billing,
  eventually,
  newAccount,
  newMachine,
  newPartner,
  newProduct,
  signed,
} from "./helpers.ts";

const uuid = "01a2070d-89b7-7094-b1d2-cc98e6753b5b";
const publicKey =
  "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq1Zb6k0m4i7sQk3Jx0n1oYc2cL8xkq0m8b5y0p3fWQ test@example";

/** 400 BAD_REQUEST in the envelope whose details name exactly these fields. */
function assertInvalid(r: ApiResponse, fields: string[], message?: RegExp) {
  assert.equal(r.status, 400, r.text.slice(0, 300));
  assert.equal(r.body.success, false);
  assert.equal(r.body.code, "BAD_REQUEST");
  assert.deepEqual(
    r.body.details.map((d: { field: string }) => d.field),
    fields,
    r.text.slice(0, 300),
  );
  if (message) assert.match(r.body.details[0].message, message);
}

describe("text PostgreSQL cannot store is refused at the edge", () => {
  it("refuses a NUL character in any body field with 400 naming the field", async () => {
    const acct = await newAccount();
    const vps = await newMachine(acct);
    const product = await newProduct();
    const cases: Array<[string, string, unknown, string]> = [
      ["POST", "/api/v1/ssh-keys", { name: "laptop\u0000", publicKey }, "name"],
      ["POST", `/api/v1/vps/${vps}/snapshots`, { name: "before\u0000upgrade" }, "name"],
      ["POST", `/api/v1/services/${vps}/cancel`, { reason: "too\u0000expensive" }, "reason"],
      ["POST", "/api/v1/orders", { productId: product.id, billingCycle: "monthly\u0000" }, "billingCycle"],
      [
        "POST",
        "/api/v1/orders",
        { items: [{ productId: product.id, billingCycle: "monthly", hostname: "web\u0000" }] },
        "items.0.hostname",
      ],
    ];
    for (const [method, path, body, field] of cases) {
      assertInvalid(await api(method, path, { key: acct.key, body }), [field], /NUL/);
    }
    const keys = await api("GET", "/api/v1/ssh-keys", { key: acct.key });
    assert.equal(keys.status, 200);
    assert.equal(JSON.stringify(keys.body.data).includes("laptop"), false, "nothing was stored");
  });

  it("refuses a NUL character in a query value and in a body key", async () => {
    const acct = await newAccount();
    for (const path of ["/api/v1/orders?status=%00", "/api/v1/orders?status=paid%00x"]) {
      assertInvalid(await api("GET", path, { key: acct.key }), ["status"], /NUL/);
    }
    assertInvalid(
      await api("POST", `/api/v1/services/${uuid}/cancel`, {
        key: acct.key,
        rawBody: '{"reason":"x","\\u0000":1}',
      }),
      ["body"],
      /NUL/,
    );
  });

  it("refuses a lone UTF-16 surrogate, which would reach the database altered", async () => {
    const acct = await newAccount();
    assertInvalid(
      await api("POST", "/api/v1/ssh-keys", {
        key: acct.key,
        rawBody: `{"name":"laptop\\ud800","publicKey":"${publicKey}"}`,
      }),
      ["name"],
      /surrogate/,
    );
    const keys = await api("GET", "/api/v1/ssh-keys", { key: acct.key });
    assert.equal(JSON.stringify(keys.body.data).includes("laptop"), false, "nothing was stored");
  });

  it("refuses a NUL character in the reseller order's ids and hostname", async () => {
    const p = await newPartner();
    const product = await newProduct();
    const item = { productId: product.id, billingCycle: "monthly" };
    const base = { externalOrderId: "ext-1", externalCustomerId: "cust-1", paymentMode: "invoice" };
    const cases: Array<[unknown, string]> = [
      [{ ...base, externalOrderId: "ext\u0000", items: [item] }, "externalOrderId"],
      [{ ...base, externalCustomerId: "c\u0000", items: [item] }, "externalCustomerId"],
      [{ ...base, items: [{ ...item, hostname: "web\u0000" }] }, "items.0.hostname"],
    ];
    for (const [body, field] of cases) {
      assertInvalid(await signed(p, "POST", "/api/v1/reseller/orders", body), [field], /NUL/);
    }
  });
});

describe("pagination bounds", () => {
  const lists = [
    "/api/v1/services",
    "/api/v1/vps",
    "/api/v1/dedicated",
    "/api/v1/invoices",
    "/api/v1/proformas",
    "/api/v1/orders",
    "/api/v1/account/transactions",
  ];

  it("refuses a page above 1,000,000 on every list with 400 naming page", async () => {
    const acct = await newAccount();
    for (const list of lists) {
      for (const page of ["2147483648", "1000001", "1e300"]) {
        assertInvalid(await api("GET", `${list}?page=${page}`, { key: acct.key }), ["page"]);
      }
    }
  });

  it("serves page 1,000,000 as an empty page and caps limit at 200", async () => {
    const acct = await newAccount();
    for (const list of lists) {
      const r = await api("GET", `${list}?page=1000000&limit=2147483648`, { key: acct.key });
      assert.equal(r.status, 200, `${list}: ${r.text.slice(0, 200)}`);
      const pagination = r.body.pagination ?? r.body.data.pagination;
      assert.equal(pagination.page, 1_000_000, list);
      assert.equal(pagination.limit, 200, list);
    }
  });

  it("documents the page maximum in the OpenAPI schema", async () => {
    const doc = (await api("GET", "/api/v1/openapi.json")).body;
    for (const list of lists) {
      const path = list.replace("/api/v1", "");
      const page = doc.paths[path].get.parameters.find((p: { name: string }) => p.name === "page");
      assert.equal(page.schema.maximum, 1_000_000, path);
      assert.equal(page.schema.minimum, 1, path);
    }
  });
});

describe("body shape", () => {
  it("refuses a 50,000-deep body with 400 BAD_REQUEST", async () => {
    const acct = await newAccount();
    const product = await newProduct();
    for (const rawBody of [
      // Deep inside a field the schema lets through (configOptions takes any extra keys).
      `{"productId":"${product.id}","billingCycle":"monthly","configOptions":{"x":${"[".repeat(50_000)}${"]".repeat(50_000)}}}`,
      "[".repeat(50_000) + "]".repeat(50_000),
      '{"a":'.repeat(50_000) + "1" + "}".repeat(50_000),
    ]) {
      const r = await api("POST", "/api/v1/orders", { key: acct.key, rawBody });
      assert.equal(r.status, 400, r.text.slice(0, 200));
      assert.equal(r.body.code, "BAD_REQUEST");
      assert.match(r.body.error, /nested more than 32 levels/);
    }
  });

  it("accepts 32 levels of nesting and refuses 33", async () => {
    const acct = await newAccount();
    const nested = (levels: number) => {
      // The body itself, items and the item are 3 levels; configOptions and what it holds the rest.
      let inner = "1";
      for (let i = 0; i < levels - 3; i++) inner = `{"x":${inner}}`;
      return `{"items":[{"productId":"nope","billingCycle":"monthly","configOptions":${inner}}]}`;
    };
    assertInvalid(await api("POST", "/api/v1/orders", { key: acct.key, rawBody: nested(32) }), [
      "items.0.productId",
    ]);
    const deep = await api("POST", "/api/v1/orders", { key: acct.key, rawBody: nested(33) });
    assert.equal(deep.status, 400);
    assert.match(deep.body.error, /nested more than 32 levels/);
  });

  it("refuses a body that is not a JSON object on routes that take a body", async () => {
    const acct = await newAccount();
    for (const rawBody of ["null", "[]", '"x"', "3", "true"]) {
      for (const path of [
        "/api/v1/orders",
        `/api/v1/services/${uuid}/cancel`,
        `/api/v1/invoices/${uuid}/pay`,
      ]) {
        assertInvalid(await api("POST", path, { key: acct.key, rawBody }), ["body"], /JSON object/);
      }
    }
  });

  it("names items when an order has more than 50", async () => {
    const acct = await newAccount();
    const product = await newProduct();
    const items = Array.from({ length: 51 }, () => ({ productId: product.id, billingCycle: "monthly" }));
    assertInvalid(await api("POST", "/api/v1/orders", { key: acct.key, body: { items } }), ["items"], /50/);
    assertInvalid(await api("POST", "/api/v1/orders", { key: acct.key, body: { items: [] } }), ["items"]);
  });

  it("validates the reseller order's hostname like the customer order's", async () => {
    const p = await newPartner();
    const acct = await newAccount();
    const product = await newProduct();
    for (const hostname of ["bad host!", "-web", "web-", "x".repeat(300)]) {
      const item = { productId: product.id, billingCycle: "monthly", hostname };
      const body = { externalOrderId: `h-${hostname.length}`, paymentMode: "invoice", items: [item] };
      assertInvalid(await signed(p, "POST", "/api/v1/reseller/orders", body), ["items.0.hostname"]);
      assertInvalid(await api("POST", "/api/v1/orders", { key: acct.key, body: item }), ["hostname"]);
    }
  });
});

describe("exact money input", () => {
  async function invoiceFor(customerId: string, amount: string, kind: "invoice" | "proforma" = "invoice") {
    const product = await newProduct();
    const { service } = await billing.adminCreateService({
      customerId,
      productId: product.id,
      kind: ProductKind.VPS,
      status: ServiceStatus.ACTIVE,
    });
    const doc = await billing.adminCreateInvoice({
      serviceId: service!.id,
      amount: amountOf(amount),
      kind: kind === "proforma" ? DocumentKind.PROFORMA : DocumentKind.INVOICE,
    });
    return doc.document!;
  }

  it("pays 0.07, 0.57 and 2.01 exactly, as numbers or decimal strings", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const invoice = await invoiceFor(acct.customerId, "30");
    const pay = (rawBody: string) =>
      api("POST", `/api/v1/invoices/${invoice.id}/pay`, { key: acct.key, rawBody });
    const expected: Array<[string, number]> = [
      ['{"amount": 0.07}', 29.93],
      ['{"amount": 0.57}', 29.36],
      ['{"amount": 2.01}', 27.35],
      ['{"amount": "0.07"}', 27.28],
      ['{"amount": 0.0700}', 27.21],
    ];
    for (const [rawBody, remaining] of expected) {
      const r = await pay(rawBody);
      assert.equal(r.status, 200, `${rawBody}: ${r.text.slice(0, 200)}`);
      assert.equal(r.body.data.remainingAmount, remaining, rawBody);
    }
    const detail = await api("GET", `/api/v1/invoices/${invoice.id}`, { key: acct.key });
    assert.equal(detail.body.data.amount_paid, 2.79);
    const balance = await api("GET", "/api/v1/account/balance", { key: acct.key });
    assert.equal(balance.body.data.balance, 97.21);
  });

  it("refuses amounts that are not a positive decimal with at most 4 decimals, naming amount", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const invoice = await invoiceFor(acct.customerId, "30");
    for (const [rawBody, message] of [
      ['{"amount": 1.00000000000000001}', /4 decimals/],
      ['{"amount": "0.00001"}', /4 decimals/],
      ['{"amount": 1.23456}', /4 decimals/],
      ['{"amount": 1e-2}', /exponent/],
      ['{"amount": 1E2}', /exponent/],
      ['{"amount": -1}', /greater than zero/],
      ['{"amount": "-0.5"}', /greater than zero/],
      ['{"amount": 0}', /greater than zero/],
      ['{"amount": "0.0000"}', /greater than zero/],
      ['{"amount": "lots"}', /decimal/],
      ['{"amount": ""}', /decimal/],
      ['{"amount": null}', /number or a decimal string/],
      ['{"amount": 123456789012345}', /too large/],
    ] as const) {
      assertInvalid(
        await api("POST", `/api/v1/invoices/${invoice.id}/pay`, { key: acct.key, rawBody }),
        ["amount"],
        message,
      );
    }
    const detail = await api("GET", `/api/v1/invoices/${invoice.id}`, { key: acct.key });
    assert.equal(detail.body.data.amount_paid, 0, "nothing was paid");
  });

  it("refuses a null body instead of paying in full, and pays in full on an empty body", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const invoice = await invoiceFor(acct.customerId, "30");
    for (const rawBody of ["null", "[]", '"30"', "30"]) {
      assertInvalid(await api("POST", `/api/v1/invoices/${invoice.id}/pay`, { key: acct.key, rawBody }), [
        "body",
      ]);
    }
    const unpaid = await api("GET", `/api/v1/invoices/${invoice.id}`, { key: acct.key });
    assert.equal(unpaid.body.data.amount_paid, 0);
    const full = await api("POST", `/api/v1/invoices/${invoice.id}/pay`, { key: acct.key });
    assert.equal(full.status, 200, full.text);
    assert.equal(full.body.data.remainingAmount, 0);
    assert.equal(full.body.data.newBalance, 70);
  });

  it("documents amount as a number or a decimal string and the pay body as optional", async () => {
    const doc = (await api("GET", "/api/v1/openapi.json")).body;
    for (const path of ["/invoices/{id}/pay", "/proformas/{id}/pay"]) {
      const body = doc.paths[path].post.requestBody;
      assert.equal(body.required, false, path);
      assert.deepEqual(body.content["application/json"].schema.properties.amount.type, ["number", "string"]);
    }
    assert.equal(doc.paths["/orders"].post.requestBody.required, true);
  });

  it("pays a proforma with an exact amount", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const proforma = await invoiceFor(acct.customerId, "10", "proforma");
    const r = await api("POST", `/api/v1/proformas/${proforma.id}/pay`, {
      key: acct.key,
      rawBody: '{"amount": 0.07}',
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.data.creditApplied, 0.07);
    assert.equal(r.body.data.remainingAmount, 9.93);
  });
});

describe("unknown routes with a key", () => {
  it("counts the request in the key's window, sends the rate-limit headers and answers 404", async () => {
    const acct = await newAccount();
    const first = await api("GET", "/api/v1/nope", { key: acct.key });
    assert.equal(first.status, 404);
    assert.deepEqual(Object.keys(first.body).sort(), ["code", "error", "success"]);
    assert.equal(first.body.code, "NOT_FOUND");
    assert.equal(first.headers.get("x-ratelimit-limit"), "1000");
    assert.equal(first.headers.get("x-ratelimit-remaining"), "999");
    assert.ok(Number(first.headers.get("x-ratelimit-reset")) > Date.now() / 1000);
    assert.match(first.headers.get("ratelimit-policy") ?? "", /q=1000;w=3600/);
    assert.match(first.headers.get("ratelimit") ?? "", /r=999/);
    const second = await api("DELETE", "/api/v1/", { key: acct.key });
    assert.equal(second.status, 404);
    assert.equal(second.headers.get("x-ratelimit-remaining"), "998");
    const index = await api("GET", "/api/v1/", { key: acct.key });
    assert.equal(index.body.data.rate_limit.remaining, 997);
    const entries = await eventually(async () => {
      const r = await auth.listRequestLog({ personId: acct.ownerId, keyId: acct.keyId, limit: 10 });
      return r.entries.length >= 3 ? r.entries : undefined;
      // The log arrives through JetStream and auth's batch consumer: give a loaded machine time.
    }, 30_000);
    assert.deepEqual(entries.map((e) => [e.method, e.endpoint, e.statusCode]).sort(), [
      ["DELETE", "/api/v1/", 404],
      ["GET", "/api/v1/", 200],
      ["GET", "/api/v1/nope", 404],
    ]);
  });

  it("checks the key before the 404: no key or a revoked key is 401", async () => {
    const acct = await newAccount();
    const none = await api("GET", "/api/v1/nope");
    assert.equal(none.status, 401);
    assert.equal(none.body.code, "UNAUTHORIZED");
    await auth.revokeKey({ personId: acct.ownerId, keyId: acct.keyId });
    const revoked = await api("GET", "/api/v1/nope", { key: acct.key });
    assert.equal(revoked.status, 401);
    assert.equal(revoked.body.code, "UNAUTHORIZED");
  });
});

describe("reseller partner status", () => {
  for (const [status, value] of [
    ["suspended", PartnerStatus.SUSPENDED],
    ["pending", PartnerStatus.PENDING],
  ] as const) {
    it(`a ${status} partner is refused writes with 403 FORBIDDEN and keeps reads`, async () => {
      const p = await newPartner(value);
      const product = await newProduct();
      const order = {
        externalOrderId: `ext-${status}`,
        paymentMode: "invoice",
        items: [{ productId: product.id, billingCycle: "monthly" }],
      };
      const placed = await signed(p, "POST", "/api/v1/reseller/orders", order);
      assert.equal(placed.status, 403, placed.text);
      assert.equal(placed.body.code, "FORBIDDEN");
      assert.match(placed.body.error, new RegExp(status));
      const webhook = await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl: "" });
      assert.equal(webhook.status, 403);
      assert.equal(webhook.body.code, "FORBIDDEN");
      const list = await signed(p, "GET", `/api/v1/reseller/orders?externalOrderId=ext-${status}`);
      assert.equal(list.status, 200, list.text);
      assert.equal(JSON.stringify(list.body.data).includes(`ext-${status}`), false, "no order was placed");
      assert.equal((await signed(p, "GET", "/api/v1/reseller/services")).status, 200);
    });
  }

  it("an active partner places the same order (201)", async () => {
    const p = await newPartner();
    const product = await newProduct();
    const placed = await signed(p, "POST", "/api/v1/reseller/orders", {
      externalOrderId: "ext-active",
      paymentMode: "invoice",
      items: [{ productId: product.id, billingCycle: "monthly" }],
    });
    assert.equal(placed.status, 201, placed.text);
  });
});
