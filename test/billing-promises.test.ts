import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ServiceAction } from "@hb/contracts/hb/billing/v1/services_pb";
import {
  type Account,
  addCredit,
  amountOf,
  api,
  balanceOf,
  billing,
  cyclePrices,
  eventually,
  kindOf,
  newAccount,
  newMember,
  newPartner,
  newProduct,
  signed,
  unique,
} from "./helpers.ts";

// Issue 8's defects, each reproduced at the HTTP edge: credit only ever comes from what was paid,
// returns to whoever paid it, in the account's currency; one charge per external order; upgrades
// priced to the date the service is paid up to.

/** A VPS plan with a bigger sibling, an "Extra IPv4" (2.00 a month) and a one-time "Setup" (25). */
async function plan(prices: Record<string, string>, bigger?: Record<string, string>) {
  const product = await newProduct("vps", prices);
  const big = await newProduct("vps", bigger ?? prices);
  const option = async (name: string, p: { recurringMonthlyPrice?: string; oneTimePrice?: string }) =>
    (
      await billing.adminAddProductOption({
        productId: product.id,
        name,
        recurringMonthlyPrice: p.recurringMonthlyPrice ? amountOf(p.recurringMonthlyPrice) : undefined,
        oneTimePrice: p.oneTimePrice ? amountOf(p.oneTimePrice) : undefined,
      })
    ).option!.id;
  return {
    productId: product.id,
    biggerId: big.id,
    ip: await option("Extra IPv4", { recurringMonthlyPrice: "2.0000" }),
    setup: await option("Setup", { oneTimePrice: "25.0000" }),
  };
}

/** Orders a service settled from credit and waits until it is active. */
async function activeService(acct: Account, productId: string, billingCycle: string): Promise<string> {
  const order = await api("POST", "/api/v1/orders", { key: acct.key, body: { productId, billingCycle } });
  assert.equal(order.status, 201, order.text);
  assert.equal(order.body.data.settled, true, order.text);
  const id: string = order.body.data.services[0].id;
  await eventually(async () => {
    const s = await api("GET", `/api/v1/services/${id}`, { key: acct.key });
    return s.body.data?.status === "active";
  }, 20_000);
  return id;
}

const buyOption = (key: string, serviceId: string, optionId: string, billingType = "recurring") =>
  api("POST", `/api/v1/services/${serviceId}/options`, {
    key,
    body: { optionId, billingType, billingCycle: "monthly", quantity: 1 },
  });

describe("credit for giving something up", () => {
  it("returns for a removed add-on only the unused share of what was paid for it, however often it is repeated", async () => {
    const acct = await newAccount();
    await addCredit(acct, "500");
    const p = await plan({ annually: "120.0000" }, { annually: "240.0000" });
    const serviceId = await activeService(acct, p.productId, "annually");
    const start = await balanceOf(acct.key);
    assert.equal(start, 380);
    for (let round = 0; round < 3; round++) {
      const bought = await buyOption(acct.key, serviceId, p.ip);
      assert.equal(bought.status, 201, bought.text);
      assert.equal(bought.body.data.invoice.total, 2, "one month of the add-on's own monthly cycle");
      const removed = await api("POST", `/api/v1/services/${serviceId}/upgrades/options`, {
        key: acct.key,
        body: { removeOptions: [p.ip] },
      });
      assert.equal(removed.status, 201, removed.text);
      assert.equal(removed.body.data.status, "completed");
      assert.ok(removed.body.data.credit <= 2 && removed.body.data.credit > 1.99, removed.text);
    }
    const end = await balanceOf(acct.key);
    assert.ok(end <= start, `balance grew from ${start} to ${end}`);
    assert.ok(end > start - 0.01, `more than rounding was kept: ${start} → ${end}`);
  });

  it("returns nothing for a one-time add-on or one never paid, and cancels the unpaid invoice", async () => {
    const acct = await newAccount();
    await addCredit(acct, "150");
    const p = await plan({ annually: "120.0000" });
    const serviceId = await activeService(acct, p.productId, "annually");
    const setup = await buyOption(acct.key, serviceId, p.setup, "one_time");
    assert.equal(setup.body.data.settled, true, setup.text);
    const before = await balanceOf(acct.key);
    const del = await api("DELETE", `/api/v1/services/${serviceId}/options/${p.setup}`, { key: acct.key });
    assert.equal(del.status, 200, del.text);
    assert.equal(del.body.data.credit, 0);
    assert.equal(await balanceOf(acct.key), before);

    // 5.00 of credit left cannot cover a quarter (6.00): the add-on waits for payment.
    const unpaid = await api("POST", `/api/v1/services/${serviceId}/options`, {
      key: acct.key,
      body: { optionId: p.ip, billingType: "recurring", billingCycle: "quarterly", quantity: 1 },
    });
    assert.equal(unpaid.body.data.settled, false, unpaid.text);
    const removed = await api("POST", `/api/v1/services/${serviceId}/upgrades/options`, {
      key: acct.key,
      body: { removeOptions: [p.ip] },
    });
    assert.equal(removed.status, 201, removed.text);
    assert.equal(removed.body.data.credit, 0);
    assert.equal(await balanceOf(acct.key), before);
    const invoice = await api("GET", `/api/v1/invoices/${unpaid.body.data.invoice.id}`, { key: acct.key });
    assert.equal(invoice.body.data.status, "cancelled");
  });

  it("returns the credit to the person who paid, not to the team member who removed the add-on", async () => {
    const acct = await newAccount();
    await addCredit(acct, "200");
    const p = await plan({ annually: "120.0000" });
    const serviceId = await activeService(acct, p.productId, "annually");
    assert.equal((await buyOption(acct.key, serviceId, p.ip)).body.data.settled, true);
    const ownerBefore = await balanceOf(acct.key);
    const member = await newMember(
      acct.customerId,
      ["view_services", "view_billing", "manage_services", "cancel_services"],
      ["orders", "destructive"],
    );
    const del = await api("DELETE", `/api/v1/services/${serviceId}/options/${p.ip}`, { key: member.key });
    assert.equal(del.status, 200, del.text);
    assert.ok(del.body.data.credit > 1.99, del.text);
    assert.equal(await balanceOf(member.key), 0, "the member paid nothing and gets nothing");
    const ownerAfter = await balanceOf(acct.key);
    assert.ok(
      Math.abs(ownerAfter - ownerBefore - del.body.data.credit) < 0.00005,
      `${ownerBefore} → ${ownerAfter}`,
    );
  });

  it("returns the unused time of an immediate cancellation to the payer, and nothing for a staff termination", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const p = await plan({ monthly: "30.0000" });
    const cancelled = await activeService(acct, p.productId, "monthly");
    const kept = await activeService(acct, p.productId, "monthly");
    assert.equal(await balanceOf(acct.key), 40);
    const r = await api("POST", `/api/v1/services/${cancelled}/cancel`, {
      key: acct.key,
      body: { reason: "no longer needed", immediate: true },
    });
    assert.equal(r.status, 200, r.text);
    const afterCancel = await balanceOf(acct.key);
    assert.ok(afterCancel > 69.99 && afterCancel <= 70, String(afterCancel));
    await billing.adminSetServiceState({ serviceId: kept, action: ServiceAction.TERMINATE, reason: "abuse" });
    assert.equal(await balanceOf(acct.key), afterCancel);
  });

  it("a service cancelled before its order is paid is taken off the order's proforma; part-payments come back", async () => {
    const acct = await newAccount();
    await addCredit(acct, "15");
    const p = await plan({ monthly: "20.0000" });
    const order = await api("POST", "/api/v1/orders", {
      key: acct.key,
      body: {
        items: [0, 1].map((i) => ({ productId: p.productId, billingCycle: "monthly", hostname: `u${i}` })),
      },
    });
    assert.equal(order.body.data.settled, false, order.text);
    const proforma = order.body.data.proforma.id;
    const part = await api("POST", `/api/v1/proformas/${proforma}/pay`, {
      key: acct.key,
      body: { amount: 15 },
    });
    assert.equal(part.status, 200, part.text);
    const [first, second] = order.body.data.services.map((x: { id: string }) => x.id);
    const c1 = await api("POST", `/api/v1/services/${first}/cancel`, {
      key: acct.key,
      body: { reason: "x", immediate: true },
    });
    assert.equal(c1.status, 200, c1.text);
    const after1 = await api("GET", `/api/v1/proformas/${proforma}`, { key: acct.key });
    assert.equal(after1.body.data.total, 20);
    assert.equal(after1.body.data.status, "unpaid");
    assert.equal(await balanceOf(acct.key), 0, "15 paid of the 20 still owed stays on the proforma");
    const c2 = await api("POST", `/api/v1/services/${second}/cancel`, {
      key: acct.key,
      body: { reason: "x", immediate: true },
    });
    assert.equal(c2.status, 200, c2.text);
    const after2 = await api("GET", `/api/v1/proformas/${proforma}`, { key: acct.key });
    assert.equal(after2.body.data.status, "cancelled");
    assert.equal(await balanceOf(acct.key), 15, "the part-payment came back");
  });

  it("a downgrade's credit goes back to the balance that paid for the service", async () => {
    const acct = await newAccount();
    await addCredit(acct, "300");
    const p = await plan({ annually: "240.0000" }, { annually: "120.0000" });
    const serviceId = await activeService(acct, p.productId, "annually");
    const member = await newMember(
      acct.customerId,
      ["view_services", "view_billing", "manage_services"],
      ["orders"],
    );
    const before = await balanceOf(acct.key);
    const down = await api("POST", `/api/v1/services/${serviceId}/upgrades`, {
      key: member.key,
      body: { toProductId: p.biggerId },
    });
    assert.equal(down.status, 201, down.text);
    assert.equal(down.body.data.status, "completed");
    assert.ok(down.body.data.amount < -119.99 && down.body.data.amount >= -120, down.text);
    assert.equal(await balanceOf(member.key), 0);
    assert.ok(Math.abs((await balanceOf(acct.key)) - before + down.body.data.amount) < 0.00005);
  });
});

describe("upgrades priced to the paid-up date", () => {
  it("charges the difference for every year paid ahead", async () => {
    const acct = await newAccount();
    await addCredit(acct, "500");
    const p = await plan({ annually: "100.0000" }, { annually: "160.0000" });
    const serviceId = await activeService(acct, p.productId, "annually");
    const renewal = await api("POST", `/api/v1/services/${serviceId}/renew`, { key: acct.key });
    assert.equal(renewal.status, 200, renewal.text);
    const paid = await api("POST", `/api/v1/invoices/${renewal.body.data.invoice.id}/pay`, {
      key: acct.key,
      body: {},
    });
    assert.equal(paid.status, 200, paid.text);
    const preview = await api("GET", `/api/v1/services/${serviceId}/upgrades`, { key: acct.key });
    const path = preview.body.data.paths.find((x: { product_id: string }) => x.product_id === p.biggerId);
    assert.ok(path.prorated_amount > 119.99 && path.prorated_amount <= 120, JSON.stringify(path));
    const up = await api("POST", `/api/v1/services/${serviceId}/upgrades`, {
      key: acct.key,
      body: { toProductId: p.biggerId },
    });
    assert.equal(up.status, 201, up.text);
    assert.ok(up.body.data.document.total > 119.99 && up.body.data.document.total <= 120, up.text);
  });

  it("charges the new price for a renewal that was open when the upgrade completed", async () => {
    const acct = await newAccount();
    await addCredit(acct, "500");
    const p = await plan({ annually: "100.0000" }, { annually: "160.0000" });
    const serviceId = await activeService(acct, p.productId, "annually");
    const renewal = await api("POST", `/api/v1/services/${serviceId}/renew`, { key: acct.key });
    const up = await api("POST", `/api/v1/services/${serviceId}/upgrades`, {
      key: acct.key,
      body: { toProductId: p.biggerId },
    });
    assert.equal(up.status, 201, up.text);
    assert.ok(up.body.data.document.total > 59.99 && up.body.data.document.total <= 60, up.text);
    const early = await api("POST", `/api/v1/invoices/${renewal.body.data.invoice.id}/pay`, {
      key: acct.key,
      body: {},
    });
    assert.equal(early.status, 409, "the renewal waits while the upgrade awaits payment");
    const upPaid = await api("POST", `/api/v1/invoices/${up.body.data.document.id}/pay`, {
      key: acct.key,
      body: {},
    });
    assert.equal(upPaid.status, 200, upPaid.text);
    const renewed = await api("POST", `/api/v1/invoices/${renewal.body.data.invoice.id}/pay`, {
      key: acct.key,
      body: {},
    });
    assert.equal(renewed.status, 200, renewed.text);
    assert.equal(renewed.body.data.creditApplied, 160);
  });

  it("a concurrent pay and cancel of one upgrade end with exactly one of them, never a 500", async () => {
    const acct = await newAccount();
    await addCredit(acct, "1000");
    const p = await plan({ monthly: "10.0000" }, { monthly: "20.0000" });
    const serviceId = await activeService(acct, p.productId, "monthly");
    for (let round = 0; round < 4; round++) {
      const now = await api("GET", `/api/v1/services/${serviceId}`, { key: acct.key });
      const target = now.body.data.product.id === p.productId ? p.biggerId : p.productId;
      const up = await api("POST", `/api/v1/services/${serviceId}/upgrades`, {
        key: acct.key,
        body: { toProductId: target },
      });
      assert.equal(up.status, 201, up.text);
      if (up.body.data.status === "completed") continue; // a downgrade completes at once
      const before = await balanceOf(acct.key);
      const [pay, cancel] = await Promise.all([
        api("POST", `/api/v1/invoices/${up.body.data.document.id}/pay`, { key: acct.key, body: {} }),
        api("POST", `/api/v1/upgrades/${up.body.data.id}/cancel`, { key: acct.key }),
      ]);
      assert.ok(pay.status < 500 && cancel.status < 500, `${pay.text} ${cancel.text}`);
      assert.ok((pay.status === 200) !== (cancel.status === 200), `${pay.status} ${cancel.status}`);
      const final = await api("GET", `/api/v1/upgrades/${up.body.data.id}`, { key: acct.key });
      const charged = before - (await balanceOf(acct.key));
      if (pay.status === 200) {
        assert.equal(final.body.data.status, "completed");
        assert.ok(Math.abs(charged - up.body.data.document.total) < 0.00005);
      } else {
        assert.equal(final.body.data.status, "cancelled");
        assert.equal(charged, 0);
      }
    }
  });
});

describe("currency", () => {
  it("refuses a product priced in another currency, naming both, and takes nothing", async () => {
    const acct = await newAccount(undefined, { currency: "USD" });
    await addCredit(acct, "100", "USD");
    const eur = await newProduct("vps", { monthly: "5.0000" }, "EUR");
    const r = await api("POST", "/api/v1/orders", {
      key: acct.key,
      body: { productId: eur.id, billingCycle: "monthly" },
    });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.code, "BAD_REQUEST");
    assert.match(r.body.error, /EUR/);
    assert.match(r.body.error, /USD/);
    assert.equal(r.body.details[0].field, "productId");
    assert.equal(await balanceOf(acct.key), 100);
    const usd = await newProduct("vps", { monthly: "5.0000" }, "USD");
    const ok = await api("POST", "/api/v1/orders", {
      key: acct.key,
      body: { productId: usd.id, billingCycle: "monthly" },
    });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.data.settled, true);
    assert.equal(await balanceOf(acct.key), 95);
    const tx = await api("GET", "/api/v1/account/transactions", { key: acct.key });
    assert.ok(tx.body.data.transactions.length >= 2);
  });

  it("refuses staff credit in a currency other than the balance's", async () => {
    const acct = await newAccount(undefined, { currency: "USD" });
    await addCredit(acct, "10", "USD");
    await assert.rejects(addCredit(acct, "10", "EUR"), /account's own, USD, not EUR/);
    assert.equal(await balanceOf(acct.key), 10);
  });
});

describe("reseller orders", () => {
  it("charges one external order id once when six copies arrive together", async () => {
    const partner = await newPartner();
    await addCredit({ customerId: partner.customerId, ownerId: partner.ownerId, key: "", keyId: "" }, "100");
    const product = await newProduct("vps", { monthly: "10.0000" });
    const body = {
      externalOrderId: `ext-${Date.now()}`,
      externalCustomerId: "c-1",
      paymentMode: "credit",
      items: [{ productId: product.id, billingCycle: "monthly", hostname: "r-1" }],
    };
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => signed(partner, "POST", "/api/v1/reseller/orders", body)),
    );
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [201, 409, 409, 409, 409, 409], answers.map((a) => a.text).join("\n"));
    for (const a of answers.filter((x) => x.status === 409)) assert.equal(a.body.code, "CONFLICT");
    const found = await signed(
      partner,
      "GET",
      `/api/v1/reseller/orders?externalOrderId=${body.externalOrderId}`,
    );
    assert.equal(found.body.data.orders.length, 1);
    const [bal] = [
      (await billing.getAccount({ caller: { customerId: partner.customerId, personId: partner.ownerId } }))
        .balance?.amount,
    ];
    assert.equal(bal, "90.0000");
  });

  it("a partner cannot lift the supplier's suspension, but can lift its own", async () => {
    const partner = await newPartner();
    await addCredit({ customerId: partner.customerId, ownerId: partner.ownerId, key: "", keyId: "" }, "100");
    const product = await newProduct("vps", { monthly: "10.0000" });
    const placed = await signed(partner, "POST", "/api/v1/reseller/orders", {
      externalOrderId: `ext-s-${Date.now()}`,
      paymentMode: "credit",
      items: [{ productId: product.id, billingCycle: "monthly", hostname: "r-2" }],
    });
    assert.equal(placed.status, 201, placed.text);
    const orderId = placed.body.data.id;
    const svc = await eventually(async () => {
      const o = await signed(partner, "GET", `/api/v1/reseller/orders/${orderId}`);
      return o.body.data?.services?.[0]?.status === "active" ? o.body.data.services[0] : undefined;
    }, 20_000);
    await billing.adminSetServiceState({ serviceId: svc.id, action: ServiceAction.SUSPEND, reason: "abuse" });
    const lift = await signed(partner, "POST", `/api/v1/reseller/services/${svc.id}/unsuspend`, {});
    assert.equal(lift.status, 403, lift.text);
    assert.equal(lift.body.code, "FORBIDDEN");
    const state = await signed(partner, "GET", "/api/v1/reseller/services");
    assert.equal(state.body.data.services.find((s: { id: string }) => s.id === svc.id).status, "suspended");
    await billing.adminSetServiceState({
      serviceId: svc.id,
      action: ServiceAction.UNSUSPEND,
      reason: "cleared",
    });
    assert.equal(
      (await signed(partner, "POST", `/api/v1/reseller/services/${svc.id}/suspend`, {})).status,
      200,
    );
    const own = await signed(partner, "POST", `/api/v1/reseller/services/${svc.id}/unsuspend`, {});
    assert.equal(own.status, 200, own.text);
    assert.equal(own.body.data.status, "active");
  });
});

describe("catalogue", () => {
  it("shows a product's add-on options with their prices", async () => {
    const p = await plan({ monthly: "10.0000" });
    const acct = await newAccount();
    const r = await api("GET", `/api/v1/products/${p.productId}`, { key: acct.key });
    assert.equal(r.status, 200, r.text);
    const byName = Object.fromEntries(
      r.body.data.options.map(
        (o: { name: string; recurring_monthly: number | null; one_time: number | null }) => [
          o.name,
          [o.recurring_monthly, o.one_time],
        ],
      ),
    );
    assert.deepEqual(byName, { "Extra IPv4": [2, null], Setup: [null, 25] });
  });

  it("lists orderable products with their cycles, prices and the hourly minimum credit", async () => {
    const { product } = await billing.adminCreateProduct({
      name: unique("hourly plan"),
      kind: kindOf("vps"),
      prices: cyclePrices({ monthly: "10.0000", hourly: "0.0200" }),
      vcpus: 1,
      memoryMb: 1024,
      diskGb: 20,
      location: "fra1",
      osImages: ["debian-12"],
      currency: "EUR",
      minimumCredit: amountOf("5"),
    });
    const id = product!.id;
    const acct = await newAccount();
    const r = await api("GET", "/api/v1/products", { key: acct.key });
    assert.equal(r.status, 200, r.text);
    const listed = r.body.data.products.find((p: { id: string }) => p.id === id);
    assert.deepEqual(listed.billing_cycles, [
      { cycle: "hourly", price: "0.0200", amount: 0.02 },
      { cycle: "monthly", price: "10.0000", amount: 10 },
    ]);
    assert.deepEqual(listed.hourly, { minimum_credit: 5 });
    assert.equal(listed.options, undefined);
  });
});
