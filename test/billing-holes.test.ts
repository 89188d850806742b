import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DocumentKind } from "@hb/contracts/hb/billing/v1/documents_pb";
import { ServiceAction } from "@hb/contracts/hb/billing/v1/services_pb";
import { resolveError } from "@hb/platform";
import {
  type Account,
  addCredit,
  amountOf,
  api,
  balanceOf,
  billing,
  eventually,
  newAccount,
  newPartner,
  newProduct,
  signed,
} from "./helpers.ts";

// Issue 21 §2: the holes a pass from outside found in billing, each shown at the HTTP edge (or at
// billing's staff RPC, for the admin ones) on the shared stack.

async function activeService(acct: Account, productId: string): Promise<string> {
  const order = await api("POST", "/api/v1/orders", {
    key: acct.key,
    body: { productId, billingCycle: "monthly" },
  });
  assert.equal(order.status, 201, order.text);
  const id: string = order.body.data.services[0].id;
  await eventually(
    async () =>
      (await api("GET", `/api/v1/services/${id}`, { key: acct.key })).body.data?.status === "active",
    20_000,
  );
  return id;
}

const statusOf = async (acct: Account, id: string) =>
  (await api("GET", `/api/v1/services/${id}`, { key: acct.key })).body.data.status as string;

describe("billing's holes, closed", () => {
  it("a never-paid item refunds nothing: cancelling it after a part-payment does not return the other's money", async () => {
    const acct = await newAccount();
    await addCredit(acct, "10");
    const product = await newProduct("vps", { monthly: "10.0000" });
    const order = await api("POST", "/api/v1/orders", {
      key: acct.key,
      body: {
        items: [0, 1].map((i) => ({ productId: product.id, billingCycle: "monthly", hostname: `free${i}` })),
      },
    });
    assert.equal(order.status, 201, order.text);
    assert.equal(order.body.data.settled, false);
    const proforma = order.body.data.proforma.id;
    const part = await api("POST", `/api/v1/proformas/${proforma}/pay`, {
      key: acct.key,
      body: { amount: 10 },
    });
    assert.equal(part.status, 200, part.text);
    const [first, second] = order.body.data.services.map((s: { id: string }) => s.id);
    const cancel = await api("POST", `/api/v1/services/${first}/cancel`, {
      key: acct.key,
      body: { reason: "changed my mind", immediate: true },
    });
    assert.equal(cancel.status, 200, cancel.text);
    assert.equal(await balanceOf(acct.key), 0, "the 10 paid the item that stays: nothing comes back");
    const doc = await api("GET", `/api/v1/proformas/${proforma}`, { key: acct.key });
    assert.equal(doc.body.data.status, "paid");
    await eventually(async () => (await statusOf(acct, second)) === "active", 20_000);
  });

  it("a partner suspending first does not swallow the supplier's suspension; each lifts only its own", async () => {
    const partner = await newPartner();
    await addCredit({ customerId: partner.customerId, ownerId: partner.ownerId, key: "", keyId: "" }, "100");
    const product = await newProduct("vps", { monthly: "10.0000" });
    const placed = await signed(partner, "POST", "/api/v1/reseller/orders", {
      externalOrderId: `ext-src-${Date.now()}`,
      paymentMode: "credit",
      items: [{ productId: product.id, billingCycle: "monthly", hostname: "src-1" }],
    });
    assert.equal(placed.status, 201, placed.text);
    const svc = await eventually(async () => {
      const o = await signed(partner, "GET", `/api/v1/reseller/orders/${placed.body.data.id}`);
      return o.body.data?.services?.[0]?.status === "active" ? o.body.data.services[0] : undefined;
    }, 20_000);
    const state = async () =>
      (await signed(partner, "GET", "/api/v1/reseller/services")).body.data.services.find(
        (s: { id: string }) => s.id === svc.id,
      ).status;
    assert.equal(
      (await signed(partner, "POST", `/api/v1/reseller/services/${svc.id}/suspend`, {})).status,
      200,
    );
    // The supplier's suspension is recorded (it used to answer 409 and be lost).
    await billing.adminSetServiceState({ serviceId: svc.id, action: ServiceAction.SUSPEND, reason: "abuse" });
    const lift = await signed(partner, "POST", `/api/v1/reseller/services/${svc.id}/unsuspend`, {});
    assert.equal(lift.status, 200, lift.text);
    assert.equal(await state(), "suspended", "the supplier's suspension stays in force");
    const again = await signed(partner, "POST", `/api/v1/reseller/services/${svc.id}/unsuspend`, {});
    assert.equal(again.status, 403, again.text);
    assert.match(again.body.error, /supplier/);
    await billing.adminSetServiceState({
      serviceId: svc.id,
      action: ServiceAction.UNSUSPEND,
      reason: "cleared",
    });
    assert.equal(await state(), "active");
  });

  it("a customer cancelling after the supplier suspended the service (abuse) gets nothing back, as staff termination", async () => {
    const acct = await newAccount();
    await addCredit(acct, "30");
    const id = await activeService(acct, (await newProduct("vps", { monthly: "30.0000" })).id);
    await billing.adminSetServiceState({ serviceId: id, action: ServiceAction.SUSPEND, reason: "abuse" });
    const cancel = await api("POST", `/api/v1/services/${id}/cancel`, {
      key: acct.key,
      body: { reason: "leaving", immediate: true },
    });
    assert.equal(cancel.status, 200, cancel.text);
    assert.equal(await balanceOf(acct.key), 0);
  });

  it("refuses a recurring add-on with an hourly cycle (400), and a quantity outside 1 to 100", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const product = await newProduct("vps", { monthly: "10.0000" });
    const option = (
      await billing.adminAddProductOption({
        productId: product.id,
        name: "IP",
        recurringMonthlyPrice: amountOf("2"),
      })
    ).option!.id;
    const id = await activeService(acct, product.id);
    const hourly = await api("POST", `/api/v1/services/${id}/options`, {
      key: acct.key,
      body: { optionId: option, billingType: "recurring", billingCycle: "hourly" },
    });
    assert.equal(hourly.status, 400, hourly.text);
    assert.equal(hourly.body.code, "BAD_REQUEST");
    for (const quantity of [0, 101]) {
      const r = await api("POST", `/api/v1/services/${id}/options`, {
        key: acct.key,
        body: { optionId: option, billingType: "recurring", quantity },
      });
      assert.equal(r.status, 400, r.text);
      assert.match(r.text, /1 to 100/);
    }
    assert.equal(await balanceOf(acct.key), 90, "nothing charged");
  });

  it("staff cannot raise an invoice on a terminated service", async () => {
    const acct = await newAccount();
    await addCredit(acct, "10");
    const id = await activeService(acct, (await newProduct("vps", { monthly: "10.0000" })).id);
    await billing.adminSetServiceState({ serviceId: id, action: ServiceAction.TERMINATE, reason: "done" });
    await assert.rejects(
      billing.adminCreateInvoice({ serviceId: id, kind: DocumentKind.INVOICE, description: "late fee" }),
      (err) => {
        assert.equal(resolveError(err).code, "CONFLICT");
        assert.match(resolveError(err).message, /terminated/);
        return true;
      },
    );
  });
});
