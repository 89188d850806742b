/**
 * Add-ons chosen at order time in the portal (issue 29 §5): the order form and the cart's add form
 * offer the product's add-ons with their prices; chosen ones go into the order (the API's
 * `addons`) and the order's page lists them, the cart counts them in its total, and one the product does not offer is refused
 * beside its field and never kept.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { amountOf, api, auth, billing, GATEWAY, newProduct } from "./helpers.ts";
import { csrfIn, portalOwner, signInVisitor } from "./portal-pages.ts";

const onceIn = (html: string) => /name="_once" value="([^"]+)"/.exec(html)?.[1] ?? "";

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

async function productWithAddons() {
  const product = await newProduct("vps", { monthly: "10.0000" });
  const add = (name: string, price: Record<string, ReturnType<typeof amountOf>>) =>
    billing.adminAddProductOption({ productId: product.id, name, ...price }).then((r) => r.option!.id);
  return {
    productId: product.id,
    ip: await add("Extra IP", { recurringMonthlyPrice: amountOf("2.5000") }),
    setup: await add("Setup", { oneTimePrice: amountOf("25.0000") }),
  };
}

/** The proforma of the customer's only order. */
async function onlyOrderDocument(key: string) {
  const orders = (await api("GET", "/api/v1/orders?limit=100", { key })).body.data.orders as { id: string }[];
  assert.equal(orders.length, 1);
  const detail = (await api("GET", `/api/v1/orders/${orders[0].id}`, { key })).body.data;
  const serviceId = detail.services[0].id as string;
  return {
    serviceId,
    options: (await api("GET", `/api/v1/services/${serviceId}/options`, { key })).body.data.options,
  };
}

describe("portal: add-ons at order time", () => {
  it("the order form offers the add-ons with prices and orders the chosen ones", async () => {
    const { key, v } = await signedIn();
    const p = await productWithAddons();
    const form = await v.get(`/portal/order/${p.productId}`);
    assert.equal(form.status, 200, form.text);
    assert.match(form.text, new RegExp(`name="addon-${p.ip}"`));
    assert.match(form.text, /<option value="recurring">2\.50 EUR \/ month<\/option>/);
    assert.match(form.text, /<option value="one_time">25\.00 EUR once<\/option>/);
    const ordered = await v.post(`/portal/order/${p.productId}`, {
      _csrf: csrfIn(form.text),
      _once: onceIn(form.text),
      billingCycle: "monthly",
      hostname: "",
      quantity: "1",
      [`addon-${p.ip}`]: "recurring",
      [`addon-${p.setup}`]: "",
    });
    assert.equal(ordered.status, 303, ordered.text);
    // The order's page lists each service's add-ons (not paid yet: no credit on this account).
    const orderPage = await v.get(ordered.location);
    assert.match(orderPage.text, /Extra IP × 1, monthly, pending payment/);
    const { options } = await onlyOrderDocument(key);
    assert.deepEqual(
      options.map((o: { option_id: string; billing_cycle: string }) => [o.option_id, o.billing_cycle]),
      [[p.ip, "monthly"]],
    );
  });

  it("the cart keeps a line's add-ons, counts them in its total, orders them, and refuses one not offered", async () => {
    const { key, v } = await signedIn();
    const p = await productWithAddons();
    const other = await productWithAddons();
    const send = async (fields: Record<string, string>) => {
      const form = await v.get(`/portal/cart/add/${p.productId}`);
      assert.match(form.text, new RegExp(`name="addon-${p.setup}"`));
      return v.post(`/portal/cart/add/${p.productId}`, {
        _csrf: csrfIn(form.text),
        _once: onceIn(form.text),
        billingCycle: "monthly",
        hostname: "",
        quantity: "2",
        ...fields,
      });
    };
    const refused = await send({ [`addon-${other.ip}`]: "recurring" });
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.text, /id="f-addons-error">[^<]*offers no such add-on/);
    const added = await send({ [`addon-${p.ip}`]: "recurring", [`addon-${p.setup}`]: "one_time" });
    assert.equal(added.status, 303, added.text);
    const cart = await v.get("/portal/cart");
    assert.match(cart.text, /Extra IP \(monthly\), Setup \(once\)/);
    // 2 × (10 + 2.50 + 25)
    assert.match(cart.text, /<strong id="cart-total">75\.00 EUR<\/strong>/);
    const placed = await v.post("/portal/cart/order", { _csrf: csrfIn(cart.text), _once: onceIn(cart.text) });
    assert.equal(placed.status, 303, placed.text);
    const { options } = await onlyOrderDocument(key);
    assert.deepEqual(options.map((o: { option_id: string }) => o.option_id).sort(), [p.ip, p.setup].sort());
  });
});
