/**
 * Holes found from outside (issue 21 §2, smaller items): hostnames with empty labels, SSH key names
 * that hide or reorder text, and idempotent replays whose JSON lists the same keys in another order.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { addCredit, api, newAccount, newProduct } from "./helpers.ts";

const publicKey =
  "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq1Zb6k0m4i7sQk3Jx0n1oYc2cL8xkq0m8b5y0p3fWQ test@example";

describe("input holes", () => {
  it("refuses hostnames that are not RFC 1123 names, naming the field", async () => {
    const acct = await newAccount();
    const product = await newProduct();
    for (const hostname of [
      "a..b",
      ".a",
      "a.",
      "-web.example.com",
      "web-.example.com",
      `${"a".repeat(64)}.com`,
    ]) {
      const r = await api("POST", "/api/v1/orders", {
        key: acct.key,
        body: { productId: product.id, billingCycle: "monthly", hostname },
      });
      assert.equal(r.status, 400, `${hostname}: ${r.text}`);
      assert.deepEqual(
        r.body.details.map((d: { field: string }) => d.field),
        ["hostname"],
        hostname,
      );
    }
    // A name of the longest labels and a one-label name are fine.
    for (const hostname of [`${"a".repeat(63)}.example.com`, "web-2"]) {
      const r = await api("POST", "/api/v1/orders", {
        key: acct.key,
        body: { productId: product.id, billingCycle: "monthly", hostname },
      });
      assert.equal(r.status, 201, `${hostname}: ${r.text}`);
    }
  });

  it("refuses SSH key names with control characters or bidirectional formatting characters", async () => {
    const acct = await newAccount();
    for (const name of [
      "lap\u202Etop",
      "a\u2066b",
      "a\u2069",
      "\u202Alaptop",
      "lap\ttop",
      "lap\u001btop",
      "a\u007f",
    ]) {
      const r = await api("POST", "/api/v1/ssh-keys", { key: acct.key, body: { name, publicKey } });
      assert.equal(r.status, 400, `${JSON.stringify(name)}: ${r.text}`);
      assert.equal(r.body.details[0].field, "name");
      assert.match(r.body.details[0].message, /control characters or bidirectional/);
    }
    const ok = await api("POST", "/api/v1/ssh-keys", {
      key: acct.key,
      body: { name: "Laptop (Zoë) 🙂", publicKey },
    });
    assert.equal(ok.status, 201, ok.text);
  });

  it("an idempotent replay with the same JSON in another key order is the same request", async () => {
    const acct = await newAccount();
    await addCredit(acct, "50");
    const product = await newProduct();
    const headers = { "idempotency-key": "reordered-1", "content-type": "application/json" };
    const first = await api("POST", "/api/v1/orders", {
      key: acct.key,
      headers,
      rawBody: `{"productId":"${product.id}","billingCycle":"monthly","configOptions":{"os_image_id":"debian-12","x":1}}`,
    });
    assert.equal(first.status, 201, first.text);
    const again = await api("POST", "/api/v1/orders", {
      key: acct.key,
      headers,
      rawBody: `{ "configOptions": {"x":1, "os_image_id": "debian-12"},\n  "billingCycle": "monthly", "productId": "${product.id}" }`,
    });
    assert.equal(again.status, 201, again.text);
    assert.equal(again.body.data.order.id, first.body.data.order.id);
    // Another value under the same key is still another request.
    const other = await api("POST", "/api/v1/orders", {
      key: acct.key,
      headers,
      rawBody: `{"billingCycle":"annually","productId":"${product.id}"}`,
    });
    assert.equal(other.status, 400);
  });
});
