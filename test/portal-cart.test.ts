/**
 * The portal's cart (issue 29 §5), over HTTP as a browser without JavaScript sends it: several
 * products, each with its own cycle, hostname and count, placed as one order (the API's `items`);
 * a line the order would refuse is refused beside its field and never kept; the cart empties once
 * the order is placed, and the same form sent again places nothing more.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { api, auth, GATEWAY, newProduct } from "./helpers.ts";
import { csrfIn, portalOwner, signInVisitor } from "./portal-pages.ts";

const onceIn = (html: string) => /name="_once" value="([^"]+)"/.exec(html)?.[1] ?? "";
const noticeIn = (html: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1] ?? "";

async function signedIn() {
  const owner = await portalOwner();
  const { secretKey } = await auth.createKey({
    personId: owner.ownerId,
    label: "checks",
    scopes: ["services", "orders", "billing"],
    ipAllowlist: "",
  });
  return { key: secretKey, v: await signInVisitor(GATEWAY, "portal", owner.email) };
}
type Visitor = Awaited<ReturnType<typeof signedIn>>["v"];

/** Sends the add form of a product with `fields`. */
async function addLine(v: Visitor, productId: string, fields: Record<string, string>) {
  const form = await v.get(`/portal/cart/add/${productId}`);
  assert.equal(form.status, 200, form.text);
  return v.post(`/portal/cart/add/${productId}`, {
    _csrf: csrfIn(form.text),
    _once: onceIn(form.text),
    billingCycle: "monthly",
    hostname: "",
    quantity: "1",
    ...fields,
  });
}

const ordersOf = async (key: string) =>
  (await api("GET", "/api/v1/orders?limit=100", { key })).body.data.orders as { id: string }[];

describe("the cart", () => {
  it("places several products, each with its own cycle, hostname and count, as one order", async () => {
    const { key, v } = await signedIn();
    const small = await newProduct("vps", { monthly: "10.0000", annually: "100.0000" });
    const big = await newProduct("vps", { monthly: "30.0000" });
    assert.equal(
      (await addLine(v, small.id, { billingCycle: "annually", hostname: "db1.example.com" })).status,
      303,
    );
    const added = await addLine(v, big.id, { quantity: "2" });
    assert.equal(added.status, 303);
    assert.match(noticeIn((await v.get(added.location)).text), /× 2 is in your cart/);

    const cart = await v.get("/portal/cart");
    assert.match(cart.text, /<strong id="cart-total">160\.00 EUR<\/strong> \(3 services/);
    assert.match(cart.text, /db1\.example\.com/);
    assert.equal((await ordersOf(key)).length, 0, "a cart orders nothing by itself");

    const fields = { _csrf: csrfIn(cart.text), _once: onceIn(cart.text) };
    const placed = await v.post("/portal/cart/order", fields);
    assert.equal(placed.status, 303);
    assert.match(placed.location, /^\/portal\/orders\/[0-9a-f-]{36}\?done=/);
    const orders = await ordersOf(key);
    assert.equal(orders.length, 1);
    const detail = (await api("GET", `/api/v1/orders/${orders[0].id}`, { key })).body.data;
    const services = detail.services as { product: { id: string }; hostname: string }[];
    assert.deepEqual(services.map((s) => s.product.id).sort(), [small.id, big.id, big.id].sort());
    assert.ok(services.some((s) => s.hostname === "db1.example.com"));

    assert.match((await v.get("/portal/cart")).text, /Your cart is empty/);
    const again = await v.post("/portal/cart/order", fields);
    assert.equal(again.location, placed.location, "the same form answers its first result");
    assert.equal((await ordersOf(key)).length, 1, "nothing ordered twice");
  });

  it("several of one line get distinct, numbered hostnames (web-1, web-2, …), from the order form and from the cart", async () => {
    const { key, v } = await signedIn();
    const product = await newProduct("vps", { monthly: "1.0000" });
    const hostnamesOf = async (orderId: string) =>
      ((await api("GET", `/api/v1/orders/${orderId}`, { key })).body.data.services as { hostname: string }[])
        .map((s) => s.hostname)
        .sort();

    const form = await v.get(`/portal/order/${product.id}`);
    const ordered = await v.post(`/portal/order/${product.id}`, {
      _csrf: csrfIn(form.text),
      _once: onceIn(form.text),
      billingCycle: "monthly",
      hostname: "web.example.test",
      quantity: "3",
    });
    assert.equal(ordered.status, 303, ordered.text);
    const [first] = await ordersOf(key);
    assert.deepEqual(await hostnamesOf(first.id), [
      "web-1.example.test",
      "web-2.example.test",
      "web-3.example.test",
    ]);

    assert.equal((await addLine(v, product.id, { hostname: "db", quantity: "2" })).status, 303);
    const cart = await v.get("/portal/cart");
    const placed = await v.post("/portal/cart/order", { _csrf: csrfIn(cart.text), _once: onceIn(cart.text) });
    assert.equal(placed.status, 303);
    const second = (await ordersOf(key)).find((o) => o.id !== first.id);
    assert.deepEqual(await hostnamesOf(second!.id), ["db-1", "db-2"]);

    // A name with no room for its number is refused when the line is added, naming the longest.
    const long = `${"a".repeat(62)}.example.test`;
    const refused = await addLine(v, product.id, { hostname: long, quantity: "10" });
    assert.equal(refused.status, 400);
    assert.match(refused.text, new RegExp(`${"a".repeat(62)}-10\\.example\\.test: must be a valid hostname`));
  });

  it("refuses beside its field a line the order would refuse, and keeps none of it", async () => {
    const { v } = await signedIn();
    const monthlyOnly = await newProduct("vps", { monthly: "10.0000" });
    for (const [fields, field, message] of [
      [{ quantity: "1e3" }, "quantity", /whole number from 1 to 50/],
      [{ quantity: "0" }, "quantity", /whole number from 1 to 50/],
      [{ billingCycle: "annually" }, "billingCycle", /is not offered annually/],
      [{ hostname: "-bad-" }, "hostname", /must be a valid hostname/],
    ] as const) {
      const r = await addLine(v, monthlyOnly.id, fields);
      assert.equal(r.status, 400, `${JSON.stringify(fields)}: ${r.status}`);
      assert.match(r.text, new RegExp(`id="f-${field}-error"[^>]*>[^<]*${message.source}`));
    }
    assert.equal((await addLine(v, monthlyOnly.id, { quantity: "45" })).status, 303);
    const over = await addLine(v, monthlyOnly.id, { quantity: "6" });
    assert.equal(over.status, 400);
    assert.match(over.text, /at most 50 services; the cart has 45, so at most 5 more/);
    const cart = (await v.get("/portal/cart")).text;
    assert.match(cart, /\(45 services/);
  });
});
