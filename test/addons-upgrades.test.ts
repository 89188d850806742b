import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { addCredit, amountOf, api, billing, cyclePrices, kindOf, newAccount, newProduct } from "./helpers.ts";

async function serviceWithOptions(customerId: string) {
  const product = await newProduct("vps", { monthly: "10.0000" });
  const bigger = await billing.adminCreateProduct({
    name: `${product.name} XL`,
    kind: kindOf("vps"),
    prices: cyclePrices({ monthly: "30.0000" }),
    currency: "EUR",
  });
  const ip = (
    await billing.adminAddProductOption({
      productId: product.id,
      name: "Extra IP",
      recurringMonthlyPrice: amountOf("2.0000"),
    })
  ).option!;
  const setup = (
    await billing.adminAddProductOption({
      productId: product.id,
      name: "Setup",
      oneTimePrice: amountOf("25.0000"),
    })
  ).option!;
  const { service } = await billing.adminCreateService({
    customerId,
    productId: product.id,
    kind: ProductKind.VPS,
    status: ServiceStatus.ACTIVE,
  });
  return {
    serviceId: service!.id,
    ipOption: ip.id,
    setupOption: setup.id,
    bigger: bigger.product!.id,
  };
}

describe("add-ons", () => {
  it("lists what the product offers, buys a full cycle from credit, marks it held, and cancels it at once", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const s = await serviceWithOptions(acct.customerId);
    const available = await api("GET", `/api/v1/services/${s.serviceId}/options/available`, {
      key: acct.key,
    });
    assert.equal(available.status, 200);
    assert.equal(available.body.data.options.length, 2);
    const bought = await api("POST", `/api/v1/services/${s.serviceId}/options`, {
      key: acct.key,
      body: { optionId: s.ipOption, billingType: "recurring", billingCycle: "quarterly", quantity: 2 },
    });
    assert.equal(bought.status, 201, bought.text);
    assert.equal(bought.body.data.settled, true);
    assert.equal(bought.body.data.invoice.total, 12, "2 × 2.00 × 3 months");
    assert.equal(bought.body.data.credit_balance, 88);
    assert.equal(bought.body.data.addon.status, "active");
    const held = await api("GET", `/api/v1/services/${s.serviceId}/options/available`, { key: acct.key });
    assert.equal(held.body.data.options.find((o: { id: string }) => o.id === s.ipOption).held, true);
    const active = await api("GET", `/api/v1/services/${s.serviceId}/options`, { key: acct.key });
    assert.equal(active.body.data.options.length, 1);
    const cancel = await api("DELETE", `/api/v1/services/${s.serviceId}/options/${s.ipOption}`, {
      key: acct.key,
    });
    assert.equal(cancel.status, 200, cancel.text);
    assert.equal(
      (await api("GET", `/api/v1/services/${s.serviceId}/options`, { key: acct.key })).body.data.options
        .length,
      0,
    );
    assert.equal(
      (await api("DELETE", `/api/v1/services/${s.serviceId}/options/${s.ipOption}`, { key: acct.key }))
        .status,
      404,
    );
  });

  it("answers a retried purchase with the same Idempotency-Key from the first, charging once", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const s = await serviceWithOptions(acct.customerId);
    const buy = (billingCycle: string) =>
      api("POST", `/api/v1/services/${s.serviceId}/options`, {
        key: acct.key,
        headers: { "idempotency-key": "addon-retry-1" },
        body: { optionId: s.ipOption, billingType: "recurring", billingCycle },
      });
    const first = await buy("monthly");
    const second = await buy("monthly");
    assert.equal(first.status, 201, first.text);
    assert.equal(second.status, 201, second.text);
    assert.deepEqual(second.body.data, first.body.data);
    assert.equal(second.body.data.credit_balance, 98);
    const balance = await api("GET", "/api/v1/account/balance", { key: acct.key });
    assert.equal(balance.body.data.balance, 98, "charged once");
    assert.equal((await buy("annually")).status, 400, "the same key with another body");
  });

  it("validates the purchase", async () => {
    const acct = await newAccount();
    const s = await serviceWithOptions(acct.customerId);
    const bad = [
      { optionId: "x", billingType: "recurring" },
      { optionId: s.ipOption, billingType: "forever" },
      { optionId: s.ipOption, billingType: "recurring", quantity: 0 },
      { optionId: s.setupOption, billingType: "recurring" },
      { optionId: s.ipOption, billingType: "recurring", billingCycle: "weekly" },
    ];
    for (const body of bad) {
      const r = await api("POST", `/api/v1/services/${s.serviceId}/options`, { key: acct.key, body });
      assert.equal(r.status, 400, `${JSON.stringify(body)} → ${r.text}`);
    }
  });
});

describe("upgrades", () => {
  it("previews paths, raises an invoice never paid automatically, and completes once it is paid", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const s = await serviceWithOptions(acct.customerId);
    const paths = await api("GET", `/api/v1/services/${s.serviceId}/upgrades`, { key: acct.key });
    assert.equal(paths.status, 200);
    const path = paths.body.data.paths.find((p: { product_id: string }) => p.product_id === s.bigger);
    assert.ok(path.prorated_amount > 0 && path.prorated_amount <= 20, String(path.prorated_amount));
    const r = await api("POST", `/api/v1/services/${s.serviceId}/upgrades`, {
      key: acct.key,
      body: { toProductId: s.bigger },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.data.status, "awaiting_payment");
    assert.equal(r.body.data.document.status, "unpaid", "credit is never applied automatically");
    const again = await api("POST", `/api/v1/services/${s.serviceId}/upgrades`, {
      key: acct.key,
      body: { toProductId: s.bigger },
    });
    assert.equal(again.status, 409);
    const pay = await api("POST", `/api/v1/invoices/${r.body.data.document.id}/pay`, {
      key: acct.key,
      body: {},
    });
    assert.equal(pay.status, 200, pay.text);
    const done = await api("GET", `/api/v1/upgrades/${r.body.data.id}`, { key: acct.key });
    assert.equal(done.body.data.status, "completed");
    assert.ok(done.body.data.order);
    const svc = await api("GET", `/api/v1/services/${s.serviceId}`, { key: acct.key });
    assert.equal(svc.body.data.product.id, s.bigger);
    assert.equal(svc.body.data.billing.amount, "30.0000");
    assert.equal(
      (await api("POST", `/api/v1/upgrades/${r.body.data.id}/cancel`, { key: acct.key })).status,
      409,
    );
  });

  it("cancels an upgrade still awaiting payment", async () => {
    const acct = await newAccount();
    const s = await serviceWithOptions(acct.customerId);
    const r = await api("POST", `/api/v1/services/${s.serviceId}/upgrades`, {
      key: acct.key,
      body: { toProductId: s.bigger },
    });
    const c = await api("POST", `/api/v1/upgrades/${r.body.data.id}/cancel`, { key: acct.key });
    assert.equal(c.status, 200, c.text);
    assert.equal(c.body.data.status, "cancelled");
    assert.equal(c.body.data.document.status, "cancelled");
  });

  it("completes at once with no document when the change nets to a credit, and refuses overlapping lists", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const s = await serviceWithOptions(acct.customerId);
    await api("POST", `/api/v1/services/${s.serviceId}/options`, {
      key: acct.key,
      body: { optionId: s.ipOption, billingType: "recurring" },
    });
    const overlap = await api("POST", `/api/v1/services/${s.serviceId}/upgrades/options`, {
      key: acct.key,
      body: { addOptions: [s.ipOption], removeOptions: [s.ipOption] },
    });
    assert.equal(overlap.status, 400);
    const before = (await api("GET", "/api/v1/account/balance", { key: acct.key })).body.data.balance;
    const r = await api("POST", `/api/v1/services/${s.serviceId}/upgrades/options`, {
      key: acct.key,
      body: { removeOptions: [s.ipOption] },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.data.status, "completed");
    assert.equal(r.body.data.document, null);
    // The credit is the unused share of the 2.00 paid for the add-on's month, returned to the payer.
    assert.ok(r.body.data.amount < -1.99 && r.body.data.amount >= -2, r.text);
    const after = (await api("GET", "/api/v1/account/balance", { key: acct.key })).body.data.balance;
    assert.ok(Math.abs(after - before + r.body.data.amount) < 0.00005, `${before} → ${after}`);
    assert.equal(
      (await api("POST", `/api/v1/upgrades/${r.body.data.id}/cancel`, { key: acct.key })).status,
      409,
    );
  });
});
