/**
 * The capacity rule (issue 30 §1) at the HTTP edge, with the simulator and a configured maximum of
 * two machines (COMPUTE_MAX_MACHINES): an order past it is held as pending provisioning, with
 * nothing built and nothing charged beyond the order itself, and is built once a place frees.
 * Runs on a stack of its own: the maximum counts every machine of the provider.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";
import { amountOf, cyclePrices, eventually, kindOf } from "./helpers.ts";
import { type OwnStack, ownStack } from "./own-stack.ts";
import { stackClient } from "./support/clients.ts";
import { stackCustomer } from "./support/stack-customer.ts";

describe("capacity: a host that is full holds new orders", () => {
  let s: OwnStack;
  let billing: ReturnType<typeof stackClient<[typeof BillingService, typeof BillingStaffService]>>;
  let key = "";
  /** Billing's log, where a held order's refusal by compute is written with its reason. */
  let billingLog = "";
  const call = (method: string, p: string, body?: unknown) => s.call(method, p, key, body);

  before(async () => {
    s = await ownStack("capacity", { COMPUTE_MAX_MACHINES: "2", PROVISIONER_INTERVAL_MS: "200" });
    s.stack.procs.get("billing")?.stdout?.on("data", (chunk: Buffer) => {
      billingLog += chunk.toString();
    });
    billing = stackClient(s.stack.env, [BillingService, BillingStaffService], "BILLING_ADDR", 20_000);
    key = (await stackCustomer(s, billing.client, "Capacity", "100")).key;
  });
  after(async () => {
    billing?.close();
    await s?.close();
  });

  it("holds the third order pending with nothing built, and builds it when a machine is removed", async () => {
    const product = (
      await billing.client.adminCreateProduct({
        name: `capacity vps ${Date.now()}`,
        kind: kindOf("vps"),
        prices: cyclePrices({ monthly: "5.0000" }),
        currency: "EUR",
        osImages: ["debian-12"],
        minimumCredit: amountOf("0"),
      })
    ).product!.id;
    const balance = async () => (await call("GET", "/account/balance")).body.data.balance as number;
    const service = async (id: string) => (await call("GET", `/services/${id}`)).body.data;
    const vps = async (id: string) => (await call("GET", `/vps/${id}`)).body.data;
    const order = async (hostname: string) => {
      const r = await call("POST", "/orders", {
        productId: product,
        billingCycle: "monthly",
        hostname,
        configOptions: { os_image_id: "debian-12" },
      });
      assert.equal(r.status, 201, r.text);
      return r.body.data.services[0].id as string;
    };
    const running = (id: string) =>
      eventually(async () => {
        const v = await vps(id);
        return v?.status === "active" && v.instance?.state === "running";
      }, 30_000);

    const start = await balance();
    const [a, b] = [await order("cap-a"), await order("cap-b")];
    await running(a);
    await running(b);
    const held = await order("cap-c");
    // Compute refused it with the reason, and billing will ask again.
    await eventually(
      async () =>
        billingLog.split("\n").some((l) => l.includes(held) && /No capacity.*2 of at most 2/.test(l)),
      30_000,
    );
    assert.equal((await service(held)).status, "pending", "held as pending provisioning");
    const record = await vps(held);
    assert.equal(record.instance, undefined, "no machine is built for it");
    assert.equal(start - (await balance()), 15, "each order paid once, nothing more for the held one");

    const cancel = await call("DELETE", `/vps/${a}`, { immediate: true });
    assert.equal(cancel.status, 200, cancel.text);
    await running(held);
    const after = await vps(held);
    assert.equal(after.hostname, "cap-c");
  });
});
