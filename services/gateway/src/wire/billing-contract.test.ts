import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { buildOpenApi } from "../openapi.ts";
import { allRoutes } from "../routes/index.ts";

type Schema = {
  type?: string;
  required?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
};
type Operation = {
  parameters?: { name: string; in: string }[];
  responses: Record<string, { content?: { "application/json": { schema: Schema } } }>;
};

const doc = buildOpenApi(allRoutes("http://127.0.0.1/api/v1"), "http://127.0.0.1/api/v1") as {
  paths: Record<string, Record<string, Operation>>;
};
const op = (method: string, path: string) => {
  const found = doc.paths[path]?.[method];
  assert.ok(found, `${method} ${path} is documented`);
  return found;
};
/** The success answer's schema of an operation. */
const answer = (method: string, path: string, status = "200") => {
  const schema = op(method, path).responses[status]?.content?.["application/json"].schema;
  assert.ok(schema, `${method} ${path} documents ${status}`);
  return schema;
};
const dataOf = (method: string, path: string, status = "200") => {
  const data = answer(method, path, status).properties?.data;
  assert.ok(data, `${method} ${path} has data`);
  return data;
};
const nonNull = (s: Schema) => s.anyOf?.find((b) => b.type !== "null") ?? s;

describe("billing answers in the OpenAPI document", () => {
  it("describe the order creation result with every field the spec names", () => {
    const data = dataOf("post", "/orders", "201");
    for (const f of [
      "order",
      "services",
      "proforma",
      "invoice",
      "document",
      "settled",
      "next_step",
      "credit_balance",
    ]) {
      assert.ok(data.required?.includes(f), `order creation result requires ${f}`);
    }
    assert.equal(data.properties?.settled.type, "boolean");
    assert.equal(data.properties?.credit_balance.type, "number");
    const order = data.properties?.order;
    for (const f of ["id", "order_number", "status", "payment_status"])
      assert.ok(order?.required?.includes(f));
    const document = nonNull(data.properties?.document as Schema);
    assert.deepEqual(document.required, ["type", "id", "status", "total", "settled"]);
  });

  it("describe the payment result with message beside data, and proformaPaid for proformas", () => {
    for (const kind of ["invoices", "proformas"]) {
      const whole = answer("post", `/${kind}/{id}/pay`);
      assert.equal(whole.properties?.message?.type, "string");
      const data = whole.properties?.data as Schema;
      for (const f of ["creditApplied", "newBalance", "remainingAmount", "invoice"]) {
        assert.ok(data.required?.includes(f), `${kind} pay result requires ${f}`);
      }
      assert.equal(data.required?.includes("proformaPaid"), kind === "proformas");
      assert.ok(nonNull(data.properties?.invoice as Schema).required?.includes("invoice_number"));
    }
  });

  it("put pagination inside data on the services, invoices, proformas, orders and transactions lists", () => {
    for (const path of ["/services", "/invoices", "/proformas", "/orders", "/account/transactions"]) {
      const data = dataOf("get", path);
      assert.ok(data.required?.includes("pagination"), `${path} has pagination inside data`);
      assert.deepEqual(data.properties?.pagination.required, ["page", "limit", "total", "pages"]);
      assert.equal(answer("get", path).properties?.pagination, undefined);
    }
    for (const path of ["/services", "/invoices"]) assert.ok(dataOf("get", path).required?.includes("stats"));
  });

  it("show an invoice the same way in the list, the order creation result, the renewal and the upgrade", () => {
    const listed = dataOf("get", "/invoices").properties?.invoices.items;
    assert.ok(listed?.required?.includes("invoice_number"));
    const elsewhere = [
      nonNull(dataOf("post", "/orders", "201").properties?.invoice as Schema),
      dataOf("post", "/services/{id}/renew").properties?.invoice,
      nonNull(dataOf("post", "/services/{id}/upgrades", "201").properties?.document as Schema),
      dataOf("post", "/services/{id}/options", "201").properties?.invoice,
    ];
    for (const s of elsewhere) assert.deepEqual(s, listed);
  });

  it("take an Idempotency-Key on every route that moves money", () => {
    for (const path of [
      "/orders",
      "/invoices/{id}/pay",
      "/proformas/{id}/pay",
      "/services/{id}/options",
      "/services/{id}/upgrades",
      "/services/{id}/upgrades/options",
      "/reseller/orders",
    ]) {
      const names = (op("post", path).parameters ?? []).filter((p) => p.in === "header").map((p) => p.name);
      assert.ok(names.includes("Idempotency-Key"), `${path} documents Idempotency-Key`);
    }
  });
});
