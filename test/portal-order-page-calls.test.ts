/**
 * An order's page in the portal lists each service's add-ons. It reads them with the order, in
 * one internal call for the whole order (billing's ListOrderAddons beside GetOrder), never with
 * one call per service: an order of fifty machines would otherwise cost fifty calls a view. The
 * counts come from billing's own metrics on a stack of this test's own, so no other file's calls
 * are counted.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { PortalService, Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";
import { amountOf, newProduct } from "./helpers.ts";
import { type OwnStack, ownStack } from "./own-stack.ts";
import { PASSWORD, signInVisitor } from "./portal-pages.ts";
import { stackClient } from "./support/clients.ts";
import { stackCustomer } from "./support/stack-customer.ts";
import { metricsText } from "./support/stack-output.ts";

/** RPCs billing has answered, by method name. */
async function billingCalls(s: OwnStack): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const line of (await metricsText(s, "billing")).split("\n")) {
    const m = /^rpc_server_handled_total\{.*method="[^"]*\/(\w+)".*\} (\S+)$/.exec(line);
    if (!m || m[1] === "Check" || m[1] === "Watch") continue;
    counts.set(m[1], (counts.get(m[1]) ?? 0) + Number(m[2]));
  }
  return counts;
}
const delta = (before: Map<string, number>, after: Map<string, number>) =>
  Object.fromEntries(
    [...after].flatMap(([k, v]) => (v > (before.get(k) ?? 0) ? [[k, v - (before.get(k) ?? 0)]] : [])),
  );

describe("portal: an order's page reads its add-ons in one call", () => {
  let s: OwnStack;
  let billing: ReturnType<typeof stackClient<[typeof BillingService, typeof BillingStaffService]>>;
  let portal: ReturnType<typeof stackClient<[typeof PortalService]>>;

  before(async () => {
    s = await ownStack("order-page-calls");
    billing = stackClient(s.stack.env, [BillingService, BillingStaffService], "BILLING_ADDR", 60_000);
    portal = stackClient(s.stack.env, [PortalService], "AUTH_ADDR");
  });
  after(async () => {
    billing?.close();
    portal?.close();
    await s?.close();
  });

  /** Someone of the customer who can sign in to the portal, as a visitor. */
  async function signedIn(personId: string, email: string) {
    const { token } = await portal.client.createPasswordLink({ realm: Realm.PORTAL, subjectId: personId });
    await portal.client.setPassword({ token, password: PASSWORD });
    return signInVisitor(s.stack.gatewayUrl, "portal", email);
  }

  it("the same calls for four services as for one, each service's add-ons shown, and none for a person who may not read them", async () => {
    const c = await stackCustomer(s, billing.client, "OrderPage", "0");
    const product = await newProduct("vps", { monthly: "10.0000" }, "EUR", billing.client);
    const option = async (name: string, price: string) =>
      (
        await billing.client.adminAddProductOption({
          productId: product.id,
          name,
          recurringMonthlyPrice: amountOf(price),
        })
      ).option!.id;
    const ip = await option("Extra IP", "2.5000");
    const backup = await option("Backups", "4.0000");
    // Four services: two with one add-on each, one with two, one with none.
    const chosen = [[ip], [backup], [ip, backup], []];
    const four = await c.call("POST", "/orders", {
      items: chosen.map((ids, n) => ({
        productId: product.id,
        billingCycle: "monthly",
        hostname: `page-${n}`,
        addons: ids.map((optionId) => ({ optionId, billingType: "recurring", billingCycle: "monthly" })),
      })),
    });
    assert.equal(four.status, 201, four.text);
    const one = await c.call("POST", "/orders", {
      productId: product.id,
      billingCycle: "monthly",
      hostname: "alone",
      addons: [{ optionId: ip, billingType: "recurring", billingCycle: "monthly" }],
    });
    assert.equal(one.status, 201, one.text);

    const me = (await c.call("GET", "/account")).body.data;
    const v = await signedIn(c.personId, me.email);
    /** Billing's calls for one view of the order's page, and the page. */
    const view = async (orderId: string) => {
      const was = await billingCalls(s);
      const page = await v.get(`/portal/orders/${orderId}`);
      assert.equal(page.status, 200, page.text);
      return { calls: delta(was, await billingCalls(s)), text: page.text };
    };
    // A first view warms whatever the page reads once per person; the counts are of the second.
    await view(one.body.data.order.id);
    const small = await view(one.body.data.order.id);
    const big = await view(four.body.data.order.id);
    assert.deepEqual(big.calls, small.calls, "four services cost what one does");
    assert.equal(big.calls.ListAddons, undefined, "no service's add-ons are read on their own");
    assert.equal(big.calls.ListOrderAddons, 1, JSON.stringify(big.calls));
    for (const [n, line] of [
      "Extra IP × 1, monthly, pending payment",
      "Backups × 1, monthly, pending payment",
      "Extra IP × 1, monthly, pending payment; Backups × 1, monthly, pending payment",
    ].entries()) {
      assert.match(big.text, new RegExp(`page-${n}</a></td>\\s*<td>.*?</td>\\s*<td>${line}</td>`), line);
    }
    assert.match(big.text, /page-3<\/a><\/td>\s*<td>.*?<\/td>\s*<td>—<\/td>/);

    // The API's answer carries them too, as GET /services/{id}/options lists them.
    const detail = (await c.call("GET", `/orders/${four.body.data.order.id}`)).body.data;
    for (const svc of detail.services) {
      const own = (await c.call("GET", `/services/${svc.id}/options`)).body.data.options;
      assert.deepEqual(svc.options, own, svc.hostname);
    }

    // A member who reads invoices but not services: the order without its add-ons, and no call for them.
    const email = `order-page-member-${Date.now()}@example.test`;
    const { person } = await s.auth.createPerson({
      customerId: c.customerId,
      name: "Invoices only",
      email,
      permissions: ["view_invoices"],
    });
    const member = await signedIn(person!.id, email);
    const was = await billingCalls(s);
    const page = await member.get(`/portal/orders/${four.body.data.order.id}`);
    assert.equal(page.status, 200, page.text);
    assert.equal(delta(was, await billingCalls(s)).ListOrderAddons, undefined);
    assert.doesNotMatch(page.text, /Extra IP/);
    assert.match(page.text, /page-0<\/a><\/td>\s*<td>.*?<\/td>\s*<td>—<\/td>/);
  });
});
