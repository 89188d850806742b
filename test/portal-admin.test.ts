/**
 * The admin panel as a support desk uses it (issue 22 §4), through its pages as a browser without
 * JavaScript sends them: customer search by name, e-mail, company or id.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { auth, GATEWAY, unique } from "./helpers.ts";
import { signInVisitor, staffMember } from "./portal-pages.ts";

describe("admin panel: customers", () => {
  it("finds a customer by part of its name, e-mail, company or id, and says when none matches", async () => {
    const tag = unique("findme").toLowerCase();
    const { customer } = await auth.createCustomer({
      name: `Grace ${tag}`,
      email: `${tag}@example.test`,
      company: `Company ${tag}`,
      currency: "EUR",
    });
    const staff = await staffMember(["view_clients"]);
    const v = await signInVisitor(GATEWAY, "admin", staff.email);
    for (const q of [`grace ${tag}`, `${tag}@example`, `COMPANY ${tag}`, customer!.id.slice(-12)]) {
      const r = await v.get(`/admin/customers?q=${encodeURIComponent(q)}`);
      assert.equal(r.status, 200);
      assert.ok(r.text.includes(`href="/admin/customers/${customer!.id}"`), `found by ${q}`);
      assert.match(r.text, /1 customer match/);
    }
    const none = await v.get(`/admin/customers?q=${encodeURIComponent(`${tag}-nobody`)}`);
    assert.match(none.text, /No customer matches this search/);
    assert.equal(none.text.includes(customer!.id), false);
  });
});
