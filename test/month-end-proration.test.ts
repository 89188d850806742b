/**
 * Proration on a service whose term starts on a month's last day (issue 28 §2: due dates on the
 * anchor day, clamped per month). A monthly service ordered on Jan 31 is paid until Feb 28; at the
 * start of that term an upgrade's quote is the whole price difference for the month, not 28/31 of
 * it (the share left was measured on a term walked back from the clamped Feb 28, i.e. from Jan 28).
 * The rule itself is a property in services/billing/src/proration.test.ts; this is the answer a
 * customer reads, on a stack of its own whose billing clock is moved to a Jan 31.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";
import { newProduct } from "./helpers.ts";
import { type OwnStack, ownStack } from "./own-stack.ts";
import { billingClock } from "./support/billing-clock.ts";
import { stackClient } from "./support/clients.ts";
import { activeService, stackCustomer } from "./support/stack-customer.ts";

describe("proration on a term that starts on a month's last day", () => {
  let s: OwnStack;
  let billing: ReturnType<typeof stackClient<[typeof BillingService, typeof BillingStaffService]>>;

  before(async () => {
    s = await ownStack("month-end", { BILLING_CLOCK_CONTROL: "true" });
    billing = stackClient(s.stack.env, [BillingService, BillingStaffService], "BILLING_ADDR", 60_000);
  });
  after(async () => {
    billing?.close();
    await s?.close();
  });

  it("an upgrade quoted as a Jan 31 term starts is the whole month's difference, not 28/31 of it", async () => {
    const clock = billingClock(() => billing.client);
    const now = await clock.now();
    let jan31 = Date.UTC(now.getUTCFullYear(), 0, 31, 1);
    if (jan31 <= now.getTime()) jan31 = Date.UTC(now.getUTCFullYear() + 1, 0, 31, 1);
    await clock.advanceTo(new Date(jan31));

    const c = await stackCustomer(s, billing.client, "MonthEnd", "100");
    const small = await newProduct("vps", { monthly: "10.0000" }, "EUR", billing.client);
    const big = await newProduct("vps", { monthly: "30.0000" }, "EUR", billing.client);
    const id = await activeService(c, small.id);
    const svc = (await c.call("GET", `/services/${id}`)).body.data;
    assert.match(svc.billing.next_due_date, /-02-28T01:/, "paid until Feb 28, clamped from the 31st");

    const r = await c.call("GET", `/services/${id}/upgrades`);
    assert.equal(r.status, 200, r.text);
    const path = r.body.data.paths.find((p: { product_id: string }) => p.product_id === big.id);
    // 20.00 a month more, for a term that started moments ago (the seconds since: well under 0.01).
    assert.ok(path.prorated_amount > 19.99 && path.prorated_amount <= 20, String(path.prorated_amount));
  });
});
