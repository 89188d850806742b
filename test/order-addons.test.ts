import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { addCredit, amountOf, api, billing, eventually, newAccount, newProduct } from "./helpers.ts";

/** A monthly product at 10.00 with an extra IP (2.00 a month) and a one-time setup (25.00). */
async function productWithAddons() {
  const product = await newProduct("vps", { monthly: "10.0000", hourly: "0.0200" });
  const option = (
    name: string,
    price: {
      recurringMonthlyPrice?: ReturnType<typeof amountOf>;
      oneTimePrice?: ReturnType<typeof amountOf>;
    },
  ) => billing.adminAddProductOption({ productId: product.id, name, ...price }).then((r) => r.option!.id);
  const other = await newProduct("vps", { monthly: "10.0000" });
  return {
    productId: product.id,
    ip: await option("Extra IP", { recurringMonthlyPrice: amountOf("2.0000") }),
    setup: await option("Setup", { oneTimePrice: amountOf("25.0000") }),
    foreign: (
      await billing.adminAddProductOption({
        productId: other.id,
        name: "Foreign",
        oneTimePrice: amountOf("1.0000"),
      })
    ).option!.id,
  };
}

const order = (key: string, body: unknown, headers?: Record<string, string>) =>
  api("POST", "/api/v1/orders", { key, body, headers });

describe("add-ons chosen at order time", () => {
  it("bills each add-on on the order's document and starts it with the service once the order is paid", async () => {
    const acct = await newAccount();
    const p = await productWithAddons();
    const addons = [
      { optionId: p.ip, billingType: "recurring", billingCycle: "quarterly", quantity: 2 },
      { optionId: p.setup, billingType: "one_time" },
    ];
    const r = await order(acct.key, { productId: p.productId, billingCycle: "monthly", addons });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.data.settled, false);
    // 10 + 2 × 2.00 × 3 months + 25, as buying each on the service would charge.
    assert.equal(r.body.data.proforma.total, 47);
    const serviceId = r.body.data.services[0].id;
    const doc = await api("GET", `/api/v1/proformas/${r.body.data.proforma.id}`, { key: acct.key });
    assert.deepEqual(
      doc.body.data.items.map((l: { description: string; amount: number; service_id: string }) => [
        l.description,
        l.amount,
        l.service_id,
      ]),
      [
        [doc.body.data.items[0].description, "10.0000", serviceId],
        ["Extra IP × 2 (quarterly)", "12.0000", serviceId],
        ["Setup × 1 (one_time)", "25.0000", serviceId],
      ],
    );
    const unpaid = await api("GET", `/api/v1/services/${serviceId}/options`, { key: acct.key });
    assert.ok(
      unpaid.body.data.options.every((o: { status: string }) => o.status === "pending_payment"),
      "nothing is active before the order is paid",
    );

    await addCredit(acct, "50");
    const paid = await api("POST", `/api/v1/proformas/${r.body.data.proforma.id}/pay`, {
      key: acct.key,
      body: {},
    });
    assert.equal(paid.status, 200, paid.text);
    assert.equal(paid.body.data.newBalance, 3, "charged the document's total once");
    const options = (await api("GET", `/api/v1/services/${serviceId}/options`, { key: acct.key })).body.data
      .options as {
      option_id: string;
      status: string;
      paid_amount: string;
      next_due_date: string | null;
      billing_cycle: string;
    }[];
    const ip = options.find((o) => o.option_id === p.ip);
    const setup = options.find((o) => o.option_id === p.setup);
    assert.equal(ip?.status, "active");
    assert.equal(ip?.paid_amount, "12.0000");
    assert.equal(ip?.billing_cycle, "quarterly");
    const svc = (await api("GET", `/api/v1/services/${serviceId}`, { key: acct.key })).body.data;
    const months = (a: string, b: string) =>
      (new Date(b).getUTCFullYear() - new Date(a).getUTCFullYear()) * 12 +
      new Date(b).getUTCMonth() -
      new Date(a).getUTCMonth();
    assert.equal(
      months(svc.billing.next_due_date, ip!.next_due_date!),
      2,
      "its own quarter from the service's start",
    );
    assert.equal(setup?.status, "active");
    assert.equal(setup?.next_due_date, null);
  });

  it("settles items with add-ons from credit at once, and a replay with the same key charges once", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const p = await productWithAddons();
    const body = {
      items: [
        {
          productId: p.productId,
          billingCycle: "monthly",
          addons: [{ optionId: p.ip, billingType: "recurring" }],
        },
        { productId: p.productId, billingCycle: "monthly" },
      ],
    };
    const headers = { "idempotency-key": `order-addons-${Date.now()}` };
    const first = await order(acct.key, body, headers);
    const again = await order(acct.key, body, headers);
    assert.equal(first.status, 201, first.text);
    assert.deepEqual(again.body.data, first.body.data);
    assert.equal(first.body.data.settled, true);
    assert.equal(first.body.data.invoice.total, 22, "10 + 2 + 10");
    assert.equal((await api("GET", "/api/v1/account/balance", { key: acct.key })).body.data.balance, 78);
    const [withIp, without] = first.body.data.services.map((s: { id: string }) => s.id);
    const held = await eventually(async () => {
      const o = await api("GET", `/api/v1/services/${withIp}/options`, { key: acct.key });
      return o.body.data.options.length === 1 ? o.body.data.options[0] : undefined;
    });
    assert.equal(held.status, "active");
    assert.equal(held.paid_amount, "2.0000");
    const none = await api("GET", `/api/v1/services/${without}/options`, { key: acct.key });
    assert.equal(none.body.data.options.length, 0);
    // Given up, it returns the unused share of what the order charged for it, as a bought one does.
    const cancel = await api("DELETE", `/api/v1/services/${withIp}/options/${p.ip}`, { key: acct.key });
    assert.equal(cancel.status, 200, cancel.text);
    const back = cancel.body.data.credit;
    assert.ok(back > 1.9 && back <= 2, `credit ${back}`);
    const balance = (await api("GET", "/api/v1/account/balance", { key: acct.key })).body.data.balance;
    assert.equal(balance, 78 + back);
  });

  it("refuses add-ons the product does not offer, chosen twice, with a wrong cycle or billing type, or on an hourly item", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const p = await productWithAddons();
    const item = (addons: unknown[], billingCycle = "monthly") => ({
      productId: p.productId,
      billingCycle,
      addons,
    });
    const ok = { productId: p.productId, billingCycle: "monthly" };
    const cases: [unknown, string][] = [
      [
        { items: [ok, item([{ optionId: p.foreign, billingType: "one_time" }])] },
        "items.1.addons.0.optionId",
      ],
      [
        item([
          { optionId: p.ip, billingType: "recurring" },
          { optionId: p.ip, billingType: "recurring" },
        ]),
        "addons.1.optionId",
      ],
      [
        { items: [item([{ optionId: p.ip, billingType: "recurring", billingCycle: "hourly" }]), ok] },
        "items.0.addons.0.billingCycle",
      ],
      [
        { items: [ok, item([{ optionId: p.ip, billingType: "recurring", billingCycle: "weekly" }])] },
        "items.1.addons.0.billingCycle",
      ],
      [item([{ optionId: p.setup, billingType: "recurring" }]), "addons.0.billingType"],
      [item([{ optionId: p.ip, billingType: "recurring", quantity: 0 }]), "addons.0.quantity"],
      [item([{ optionId: "x", billingType: "recurring" }]), "addons.0.optionId"],
      [item([{ optionId: p.ip, billingType: "recurring" }], "hourly"), "addons"],
    ];
    for (const [body, field] of cases) {
      const r = await order(acct.key, body);
      assert.equal(r.status, 400, `${JSON.stringify(body)} → ${r.text}`);
      assert.equal(r.body.code, "BAD_REQUEST");
      assert.deepEqual(
        r.body.details.map((d: { field: string }) => d.field),
        [field],
        r.text,
      );
    }
    assert.equal(
      (await api("GET", "/api/v1/account/balance", { key: acct.key })).body.data.balance,
      100,
      "nothing charged",
    );
  });

  it("an order cancelled before payment starts none of its add-ons and stops charging for them", async () => {
    const acct = await newAccount();
    const p = await productWithAddons();
    const r = await order(acct.key, {
      productId: p.productId,
      billingCycle: "monthly",
      addons: [{ optionId: p.setup, billingType: "one_time" }],
    });
    assert.equal(r.status, 201, r.text);
    const serviceId = r.body.data.services[0].id;
    const cancel = await api("POST", `/api/v1/services/${serviceId}/cancel`, {
      key: acct.key,
      body: { reason: "changed my mind", immediate: true },
    });
    assert.ok(cancel.status < 300, cancel.text);
    const options = await api("GET", `/api/v1/services/${serviceId}/options`, { key: acct.key });
    assert.equal(options.body.data.options.length, 0, options.text);
    const doc = await api("GET", `/api/v1/proformas/${r.body.data.proforma.id}`, { key: acct.key });
    assert.equal(doc.body.data.status, "cancelled", "nothing is left to pay, the add-on's line included");
  });
});
