/**
 * The admin panel's customer page as a support desk uses it (issue 22 §4), driven over HTTP as a
 * browser without JavaScript sends forms: each write reaches the service that owns it and leaves
 * its audit row; view-only staff see no write control and are refused when they post one anyway.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { type StaffAction, StaffActionOutcome } from "@hb/contracts/hb/auth/v1/staff_audit_pb";
import { BillingDeskService } from "@hb/contracts/hb/billing/v1/billing_desk_pb";
import { api, auth, billing, GATEWAY, grpc, newAccount, newMachine, newPartner, unique } from "./helpers.ts";
import { csrfIn, signInVisitor, staffMember } from "./portal-pages.ts";

const desk = grpc([BillingDeskService], "BILLING_ADDR");

const editor = async () => {
  const s = await staffMember(["view_clients", "edit_clients"]);
  return { ...s, v: await signInVisitor(GATEWAY, "admin", s.email) };
};

async function auditOf(customerId: string): Promise<StaffAction[]> {
  return (await auth.listStaffActions({ customerId, limit: 200 })).actions;
}

/** The page's CSRF token, then the form posted with it. */
async function post(
  v: Awaited<ReturnType<typeof signInVisitor>>,
  page: string,
  action: string,
  form: Record<string, string>,
) {
  const p = await v.get(page);
  assert.equal(p.status, 200, `${page} answers 200`);
  return v.post(action, { _csrf: csrfIn(p.text), ...form });
}

const errorOf = (text: string, field: string) =>
  new RegExp(`id="f-${field}-error">([^<]+)<`).exec(text)?.[1] ?? "";

describe("admin panel: a customer's profile and status", () => {
  it("a profile edit is saved in auth, and its audit row names the staff member, the before and the after", async () => {
    const acct = await newAccount();
    const s = await editor();
    const base = `/admin/customers/${acct.customerId}`;
    const email = `${unique("renamed")}@example.test`;
    const r = await post(s.v, base, `${base}/profile`, {
      name: "Renamed Ltd owner",
      email,
      company: "Renamed Ltd",
      country: "fr",
    });
    assert.equal(r.status, 303);
    assert.equal(r.location, `${base}?done=profile`);
    const { customer } = await auth.getCustomer({ customerId: acct.customerId });
    assert.deepEqual(
      [customer!.name, customer!.email, customer!.company, customer!.country],
      ["Renamed Ltd owner", email, "Renamed Ltd", "FR"],
    );
    const [row] = await auditOf(acct.customerId);
    assert.equal(row.action, "customer.update");
    assert.equal(row.staffId, s.staffId);
    assert.equal(row.staffEmail, s.email);
    assert.equal(row.outcome, StaffActionOutcome.SUCCEEDED);
    assert.equal(JSON.parse(row.before).company, "Test Co");
    assert.equal(JSON.parse(row.after).country, "FR");
    const audit = await s.v.get(`${base}/audit`);
    assert.equal(audit.status, 200);
    assert.match(audit.text, /customer\.update/);
    assert.match(audit.text, /company: Renamed Ltd/);
  });

  it("a bad country, a bad e-mail and another customer's e-mail come back 400/409 beside their field, nothing saved", async () => {
    const acct = await newAccount();
    const other = await newAccount();
    const { customer: taken } = await auth.getCustomer({ customerId: other.customerId });
    const s = await editor();
    const base = `/admin/customers/${acct.customerId}`;
    const ok = { name: "Someone", email: `${unique("ok")}@example.test`, company: "", country: "DE" };
    const country = await post(s.v, base, `${base}/profile`, { ...ok, country: "ZZ" });
    assert.equal(country.status, 400);
    assert.notEqual(errorOf(country.text, "country"), "");
    assert.match(country.text, /value="ZZ"/);
    const email = await post(s.v, base, `${base}/profile`, { ...ok, email: "not-an-address" });
    assert.equal(email.status, 400);
    assert.notEqual(errorOf(email.text, "email"), "");
    const dup = await post(s.v, base, `${base}/profile`, { ...ok, email: taken!.email.toUpperCase() });
    assert.equal(dup.status, 409);
    assert.match(errorOf(dup.text, "email"), /already exists/);
    const { customer } = await auth.getCustomer({ customerId: acct.customerId });
    assert.equal(customer!.name, "Test Customer");
    // Each refusal is in the audit log as refused, with the service's message.
    const rows = await auditOf(acct.customerId);
    assert.equal(rows.length, 3);
    assert.ok(rows.every((r) => r.outcome === StaffActionOutcome.FAILED && r.error));
  });

  it("suspending needs a reason; with one the account is suspended with it, and unsuspending lifts it", async () => {
    const acct = await newAccount();
    const s = await editor();
    const base = `/admin/customers/${acct.customerId}`;
    const blank = await post(s.v, base, `${base}/suspend`, { reason: "  " });
    assert.equal(blank.status, 400);
    assert.match(errorOf(blank.text, "reason"), /Say why/);
    assert.equal(
      (await auth.getCustomer({ customerId: acct.customerId })).customer!.status,
      CustomerStatus.ACTIVE,
    );

    const r = await post(s.v, base, `${base}/suspend`, { reason: "Chargeback on card" });
    assert.equal(r.status, 303);
    const { customer } = await auth.getCustomer({ customerId: acct.customerId });
    assert.equal(customer!.status, CustomerStatus.SUSPENDED);
    assert.equal(customer!.statusReason, "Chargeback on card");

    const lifted = await post(s.v, base, `${base}/unsuspend`, { reason: "Paid by transfer" });
    assert.equal(lifted.status, 303);
    assert.equal(
      (await auth.getCustomer({ customerId: acct.customerId })).customer!.status,
      CustomerStatus.ACTIVE,
    );
    const rows = await auditOf(acct.customerId);
    assert.deepEqual(
      rows.map((x) => [x.action, x.reason, x.outcome]),
      [
        ["customer.unsuspend", "Paid by transfer", StaffActionOutcome.SUCCEEDED],
        ["customer.suspend", "Chargeback on card", StaffActionOutcome.SUCCEEDED],
      ],
    );
  });
});

describe("admin panel: a customer's money and machines", () => {
  it("a manual credit adjustment moves the balance and keeps the staff member and the reason on the ledger", async () => {
    const acct = await newAccount();
    const s = await editor();
    const base = `/admin/customers/${acct.customerId}`;
    const add = await post(s.v, `${base}/balance`, `${base}/credit`, {
      person: acct.ownerId,
      amount: "25.50",
      reason: "Goodwill for the outage",
    });
    assert.equal(add.status, 303);
    const caller = { customerId: acct.customerId, personId: acct.ownerId, currency: "EUR" };
    assert.equal(Number((await billing.getAccount({ caller })).balance?.amount), 25.5);
    const { transactions } = await desk.deskGetCustomerBilling({ customerId: acct.customerId });
    assert.equal(transactions[0].staffId, s.staffId);
    assert.equal(transactions[0].transaction?.description, "Goodwill for the outage");
    const [row] = await auditOf(acct.customerId);
    assert.equal(row.action, "credit.adjust");
    assert.equal(row.reason, "Goodwill for the outage");
    assert.equal(Number(JSON.parse(row.after).balance), 25.5);
    const page = await s.v.get(`${base}/balance`);
    assert.match(page.text, /Goodwill for the outage/);
  });

  it("a debit past the balance, a zero amount and a missing reason are refused beside their field, the balance unchanged", async () => {
    const acct = await newAccount();
    const s = await editor();
    const base = `/admin/customers/${acct.customerId}`;
    const form = { person: acct.ownerId, amount: "-10", reason: "Correction" };
    const debit = await post(s.v, `${base}/balance`, `${base}/credit`, form);
    assert.equal(debit.status, 400);
    assert.match(errorOf(debit.text, "amount"), /exceeds the credit balance/);
    const zero = await post(s.v, `${base}/balance`, `${base}/credit`, { ...form, amount: "0.00" });
    assert.equal(zero.status, 400);
    assert.notEqual(errorOf(zero.text, "amount"), "");
    const noReason = await post(s.v, `${base}/balance`, `${base}/credit`, {
      ...form,
      amount: "5",
      reason: "",
    });
    assert.equal(noReason.status, 400);
    assert.notEqual(errorOf(noReason.text, "reason"), "");
    const caller = { customerId: acct.customerId, personId: acct.ownerId, currency: "EUR" };
    assert.equal(Number((await billing.getAccount({ caller })).balance?.amount ?? 0), 0);
    const rows = await auditOf(acct.customerId);
    assert.deepEqual(
      rows.map((r) => [r.action, r.outcome]),
      [["credit.adjust", StaffActionOutcome.FAILED]],
    );
  });

  it("a refused adjustment is named on the page but leaves nothing in the form, so the next, different one carries none of it", async () => {
    const acct = await newAccount();
    const s = await editor();
    const base = `/admin/customers/${acct.customerId}`;
    const refused = await post(s.v, `${base}/balance`, `${base}/credit`, {
      person: acct.ownerId,
      amount: "-100000",
      reason: "Refund of the March invoice",
    });
    assert.equal(refused.status, 400);
    assert.match(errorOf(refused.text, "amount"), /exceeds the credit balance/);
    assert.match(refused.text, /Not done: -100000 EUR, reason “Refund of the March invoice”/);
    const form = refused.text.slice(refused.text.indexOf(`action="${base}/credit"`));
    assert.match(form, /<input type="text" id="f-amount"[^>]*value=""/, "the amount is not kept");
    assert.match(form, /<textarea id="f-reason"[^>]*><\/textarea>/, "the reason is not kept");
    assert.ok(form.includes(`value="${acct.ownerId}" selected`), "whose balance stays chosen");
  });

  it("a power action run by staff is a job the customer's API lists", async () => {
    const acct = await newAccount();
    const serviceId = await newMachine(acct);
    const s = await editor();
    const base = `/admin/customers/${acct.customerId}`;
    const page = await s.v.get(`${base}/services`);
    assert.match(page.text, new RegExp(`/services/${serviceId}/power`));
    const r = await s.v.post(`${base}/services/${serviceId}/power`, {
      _csrf: csrfIn(page.text),
      action: "reboot",
    });
    assert.equal(r.status, 303);
    const jobId = new URL(r.location, GATEWAY).searchParams.get("job");
    assert.ok(jobId);
    // The customer's API reads the job as its own.
    const job = await api("GET", `/api/v1/jobs/${jobId}`, { key: acct.key });
    assert.equal(job.status, 200, job.text);
    assert.deepEqual([job.body.data.action, job.body.data.resource.id], ["reboot", serviceId]);
    const [row] = await auditOf(acct.customerId);
    assert.deepEqual(
      [row.action, row.target, JSON.parse(row.after).job_id],
      ["service.power", serviceId, jobId],
    );
    const wrong = await s.v.post(`${base}/services/${serviceId}/power`, {
      _csrf: csrfIn(page.text),
      action: "on",
    });
    assert.equal(wrong.status, 400);
    assert.match(wrong.text, /must be one of/);
  });
});

describe("admin panel: people, staff and settings", () => {
  it("adding a person and saving their permissions reach auth, each with its audit row; the link is shown once and recorded without its token", async () => {
    const acct = await newAccount();
    const s = await editor();
    const base = `/admin/customers/${acct.customerId}`;
    const email = `${unique("helper")}@example.test`;
    const page = await s.v.get(`${base}/people`);
    const added = await s.v.post(`${base}/people`, {
      _csrf: csrfIn(page.text),
      name: "Helper",
      email,
      permissions: "view_services",
    });
    assert.equal(added.status, 200);
    const token = /set-password\?token=([^"&]+)/.exec(added.text)?.[1] ?? "";
    assert.ok(token);
    const person = (await auth.getCustomer({ customerId: acct.customerId })).people.find(
      (p) => p.email === email,
    );
    assert.deepEqual(person?.permissions, ["view_services"]);
    const saved = await post(s.v, `${base}/people`, `${base}/people/${person!.id}/permissions`, {
      permissions: "view_billing",
    });
    assert.equal(saved.status, 303);
    const after = (await auth.getCustomer({ customerId: acct.customerId })).people.find(
      (p) => p.id === person!.id,
    );
    assert.deepEqual(after?.permissions, ["view_billing"]);
    const rows = await auditOf(acct.customerId);
    assert.deepEqual(
      rows.map((r) => [r.action, r.outcome]),
      [
        ["person.permissions", StaffActionOutcome.SUCCEEDED],
        ["person.password_link", StaffActionOutcome.SUCCEEDED],
        ["person.create", StaffActionOutcome.SUCCEEDED],
      ],
    );
    assert.deepEqual(JSON.parse(rows[0].before).permissions, ["view_services"]);
    assert.ok(rows.every((r) => !`${r.before}${r.after}`.includes(decodeURIComponent(token))));
  });

  it("creating a customer, a staff member's permissions and the settings are audited, a new customer's creation under that customer", async () => {
    const s = await editor();
    const email = `${unique("fresh")}@example.test`;
    const created = await post(s.v, "/admin/customers", "/admin/customers", {
      name: "Fresh",
      email,
      currency: "EUR",
    });
    assert.equal(created.status, 303);
    const customerId = /\/admin\/customers\/([0-9a-f-]{36})/.exec(created.location)?.[1] ?? "";
    const [made] = await auditOf(customerId);
    assert.deepEqual([made.action, made.outcome], ["customer.create", StaffActionOutcome.SUCCEEDED]);

    const other = await staffMember(["view_clients"]);
    const perms = await post(s.v, "/admin/staff", `/admin/staff/${other.staffId}/permissions`, {
      permissions: "edit_clients",
    });
    assert.equal(perms.status, 200);
    const hooks = await post(s.v, "/admin/settings", "/admin/settings/webhooks", {
      max_attempts: "11",
      base_delay: "60",
    });
    assert.equal(hooks.status, 400);
    const { actions } = await auth.listStaffActions({ limit: 200 });
    const mine = actions.filter((a) => a.staffId === s.staffId && !a.customerId);
    assert.deepEqual(
      mine.map((a) => [a.action, a.target, a.outcome]),
      [
        ["settings.webhooks", "", StaffActionOutcome.FAILED],
        ["staff.permissions", other.staffId, StaffActionOutcome.SUCCEEDED],
      ],
    );
  });
});

describe("admin panel: view-only staff", () => {
  it("see every tab without a write control", async () => {
    const acct = await newAccount();
    await newMachine(acct);
    const viewer = await staffMember(["view_clients"]);
    const v = await signInVisitor(GATEWAY, "admin", viewer.email);
    const base = `/admin/customers/${acct.customerId}`;
    for (const tab of ["", "/people", "/services", "/documents", "/balance", "/keys", "/partner", "/audit"]) {
      const r = await v.get(base + tab);
      assert.equal(r.status, 200, `${tab || "/"} answers 200`);
      const forms = [...r.text.matchAll(/<form method="post" action="([^"]+)"/g)].map((m) => m[1]);
      assert.deepEqual(forms, ["/admin/sign-out"], `${tab || "/"} has no write form`);
    }
    assert.equal((await v.get("/admin/customers/not-a-customer")).status, 404);
    assert.equal((await v.get(`/admin/customers/${crypto.randomUUID()}/balance`)).status, 404);
  });

  it("are refused 403 on every write form, and nothing is written or audited", async () => {
    const acct = await newAccount();
    const serviceId = await newMachine(acct);
    const partner = await newPartner(PartnerStatus.PENDING);
    const { people } = await auth.getCustomer({ customerId: acct.customerId });
    const viewer = await staffMember(["view_clients"]);
    const v = await signInVisitor(GATEWAY, "admin", viewer.email);
    const csrf = csrfIn((await v.get("/admin/customers")).text);
    const c = `/admin/customers/${acct.customerId}`;
    const p = `/admin/partners/${partner.customerId}`;
    const writes: [string, Record<string, string>][] = [
      ["/admin/customers", { name: "X", email: `${unique("x")}@example.test` }],
      [`${c}/profile`, { name: "Hijacked", email: `${unique("h")}@example.test`, company: "", country: "" }],
      [`${c}/suspend`, { reason: "no" }],
      [`${c}/unsuspend`, { reason: "no" }],
      [`${c}/people`, { name: "Intruder", email: `${unique("i")}@example.test` }],
      [`${c}/people/${people[0].id}/link`, {}],
      [`${c}/people/${people[0].id}/permissions`, { permissions: "billing" }],
      [`${c}/services/${serviceId}/power`, { action: "stop" }],
      [`${c}/credit`, { person: acct.ownerId, amount: "1000", reason: "free money" }],
      [`${c}/keys/${acct.keyId}/revoke`, {}],
      ["/admin/staff", { name: "Y", email: `${unique("y")}@example.test`, permissions: "edit_clients" }],
      [`/admin/staff/${viewer.staffId}/permissions`, { permissions: "edit_clients" }],
      [`/admin/staff/${viewer.staffId}/link`, {}],
      ["/admin/settings", { api: "", hourly: "1", keys: "1" }],
      ["/admin/settings/webhooks", { max_attempts: "1", base_delay: "10" }],
      [`${p}/webhook`, { url: "https://example.com/hook" }],
      [`${p}/rotate`, {}],
      [`${p}/approve`, {}],
      [`${p}/suspend`, {}],
    ];
    for (const [path, form] of writes) {
      const r = await v.post(path, { _csrf: csrf, ...form });
      assert.equal(r.status, 403, `${path} is refused`);
      assert.match(r.text, /Edit clients/);
    }
    const { customer } = await auth.getCustomer({ customerId: acct.customerId });
    assert.equal(customer!.status, CustomerStatus.ACTIVE);
    assert.equal(customer!.name, "Test Customer");
    const caller = { customerId: acct.customerId, personId: acct.ownerId, currency: "EUR" };
    assert.equal(Number((await billing.getAccount({ caller })).balance?.amount ?? 0), 0);
    assert.equal((await api("GET", "/api/v1/account", { key: acct.key })).status, 200);
    assert.equal((await auth.listStaffActions({ customerId: acct.customerId })).total, 0);
    assert.equal((await auth.listStaffActions({ customerId: partner.customerId })).total, 0);
  });
});

describe("admin panel: the audit log", () => {
  it("covers the partner and key writes, newest first, one page of 20 at a time", async () => {
    const partner = await newPartner(PartnerStatus.PENDING);
    const s = await editor();
    const p = `/admin/partners/${partner.customerId}`;
    assert.equal((await post(s.v, p, `${p}/approve`, {})).status, 200);
    const rotated = await post(s.v, p, `${p}/rotate`, {});
    assert.equal(rotated.status, 200);
    const secret = /id="new-secret" class="mono" readonly value="([^"]+)"/.exec(rotated.text)?.[1] ?? "";
    assert.ok(secret.length > 10);
    const rows = await auditOf(partner.customerId);
    assert.deepEqual(
      rows.map((r) => r.action),
      ["partner.rotate_secret", "partner.approve"],
    );
    // The secret shown once is in no audit row.
    assert.ok(rows.every((r) => !`${r.before}${r.after}`.includes(secret)));

    const acct = await newAccount();
    const c = `/admin/customers/${acct.customerId}`;
    assert.equal((await post(s.v, `${c}/keys`, `${c}/keys/${acct.keyId}/revoke`, {})).status, 303);
    for (let i = 0; i < 21; i++) {
      const r = await post(s.v, c, `${c}/suspend`, { reason: `round ${i}` });
      assert.equal(r.status, 303);
      assert.equal((await post(s.v, c, `${c}/unsuspend`, { reason: `round ${i}` })).status, 303);
    }
    const all = await auditOf(acct.customerId);
    assert.equal(all.length, 43);
    assert.equal(all.at(-1)!.action, "key.revoke");
    assert.equal(all[0].action, "customer.unsuspend");
    const first = await s.v.get(`${c}/audit`);
    assert.match(first.text, /43 entries/);
    assert.match(first.text, /Page 1 of 3/);
    const last = await s.v.get(`${c}/audit?audit_page=3`);
    assert.match(last.text, /key\.revoke/);
    assert.doesNotMatch(first.text, /key\.revoke/);
  });
});
