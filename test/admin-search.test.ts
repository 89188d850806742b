/**
 * The support desk's search (issue 29 §6) over HTTP as staff use it: a customer is found by a
 * service hostname, an IP address, a service id, an order number, an invoice or proforma number, a
 * team member's e-mail and a bank-transfer reference, and each result says what matched.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { InstanceState } from "@hb/contracts/hb/compute/v1/machines_pb";
import {
  addCredit,
  api,
  auth,
  billing,
  compute,
  GATEWAY,
  kindOf,
  newAccount,
  newProduct,
  unique,
} from "./helpers.ts";
import { csrfIn, onceIn, portalOwner, signInVisitor, staffMember } from "./portal-pages.ts";
import { serviceSql } from "./support/service-db.ts";

/** The matches the search page lists: [what matched, value, customer link]. */
const matchesOf = (text: string) =>
  [...text.matchAll(/<tr><td>([^<]+)<\/td><td class="mono">([^<]*)<\/td>\s*<td><a href="([^"]+)"/g)].map(
    (m) => [m[1], m[2], m[3]] as const,
  );

describe("admin panel: the support desk's search", () => {
  it("finds the customer by hostname, IP address, service id, ORD-, INV- and PRO- numbers, a member's e-mail and a transfer reference, saying what matched", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const product = await newProduct("vps", { monthly: "10.0000" });
    const hostname = `${unique("desk")}.example.test`.toLowerCase();
    const placed = await api("POST", "/api/v1/orders", {
      key: acct.key,
      body: { productId: product.id, billingCycle: "monthly", hostname },
    });
    assert.equal(placed.status, 201, placed.text);
    const d = placed.body.data;
    const serviceId: string = d.services[0].id;

    // A running machine of its own, so it has addresses now.
    const { service } = await billing.adminCreateService({
      customerId: acct.customerId,
      productId: product.id,
      kind: kindOf("vps"),
      status: ServiceStatus.ACTIVE,
    });
    await compute.adminCreateMachine({
      serviceId: service!.id,
      customerId: acct.customerId,
      state: InstanceState.RUNNING,
    });
    const sql = serviceSql("compute");
    const [ip] = await sql<{ address: string }[]>`
      select address from compute.ip_addresses where service_id = ${service!.id} and version = 4 limit 1`;
    await sql.end({ timeout: 5 });
    assert.ok(ip, "the machine has an address");

    const email = `${unique("tess")}@example.test`;
    await auth.createPerson({ customerId: acct.customerId, name: "Tess", email, permissions: [] });

    // A bank transfer of another customer, asked for in the portal.
    const o = await portalOwner();
    const portal = await signInVisitor(GATEWAY, "portal", o.email);
    const credit = await portal.get("/portal/add-credit");
    const ask = "/portal/add-credit/bank";
    const t = await portal.post(ask, {
      _csrf: csrfIn(credit.text),
      _once: onceIn(credit.text, ask),
      "bank-amount": "25",
    });
    assert.equal(t.status, 303, t.text);
    const reference = /HB-[0-9A-Z]{4}-[0-9A-Z]{4}/.exec((await portal.get(t.location)).text)?.[0] ?? "";
    assert.ok(reference);

    const staff = await staffMember(["view_clients"]);
    const v = await signInVisitor(GATEWAY, "admin", staff.email);
    const customer = `/admin/customers/${acct.customerId}`;
    const cases: [string, string, string, string][] = [
      [hostname.slice(0, -6), "Service hostname", hostname, customer],
      [ip.address, "IP address", ip.address, customer],
      [serviceId, "Service id", serviceId, customer],
      [d.order.order_number.toLowerCase(), "Order number", d.order.order_number, customer],
      [d.invoice.invoice_number, "Invoice number", d.invoice.invoice_number, customer],
      [d.proforma.proforma_number, "Proforma number", d.proforma.proforma_number, customer],
      [email.toUpperCase(), "Team member e-mail", email, customer],
      [reference.toLowerCase(), "Bank-transfer reference", reference, `/admin/customers/${o.customerId}`],
    ];
    for (const [q, what, value, link] of cases) {
      const r = await v.get(`/admin/search?q=${encodeURIComponent(q)}`);
      assert.equal(r.status, 200, q);
      assert.ok(
        matchesOf(r.text).some(([w, x, l]) => w === what && x === value && l === link),
        `${q}: ${what} ${value} → ${link} in ${JSON.stringify(matchesOf(r.text))}`,
      );
    }

    // The service page, linked from the search and the customer's services, shows the service
    // with its documents, and the machine with its addresses.
    const found = await v.get(`/admin/search?q=${encodeURIComponent(hostname)}`);
    const pageOf = `${customer}/services/${serviceId}`;
    assert.ok(found.text.includes(`href="${pageOf}"`), "the search links the service page");
    const services = await v.get(`${customer}/services`);
    assert.ok(services.text.includes(`href="${pageOf}"`), "the services tab links the service page");
    const shown = await v.get(pageOf);
    assert.equal(shown.status, 200);
    assert.ok(shown.text.includes(hostname));
    assert.ok(shown.text.includes(d.invoice.invoice_number), "the service's invoice is listed");
    for (const h of ["Machine", "Jobs", "Documents", "Events"])
      assert.match(shown.text, new RegExp(`<h2>${h}</h2>`));
    const machine = await v.get(`${customer}/services/${service!.id}`);
    assert.equal(machine.status, 200);
    assert.ok(machine.text.includes(ip.address), "the machine's address is shown");
    assert.doesNotMatch(machine.text, /<strong>lost<\/strong>/);
    // Its instance found gone at the provider (issue 30): staff see it lost.
    const marked = serviceSql("compute");
    await marked`update compute.machines set state = 'error', lost_at = now() where service_id = ${service!.id}`;
    await marked.end({ timeout: 5 });
    const lost = await v.get(`${customer}/services/${service!.id}`);
    assert.match(lost.text, /<strong>lost<\/strong>: its instance has been gone at the provider since/);
    assert.equal((await v.get(`/admin/customers/${o.customerId}/services/${serviceId}`)).status, 404);

    const none = await v.get(`/admin/search?q=${encodeURIComponent(unique("nothing"))}`);
    assert.match(none.text, /Nothing matches/);
    // A query that is no address is not sent to compute as one (it would be refused 400).
    assert.equal((await v.get("/admin/search?q=%25_%5C")).status, 200);
  });

  it("the customer's invoices and proformas name the service by hostname, linked to its staff page, and the order by number", async () => {
    const acct = await newAccount();
    const product = await newProduct("vps", { monthly: "10.0000" });
    const hostname = `${unique("billed")}.example.test`.toLowerCase();
    const { service } = await billing.adminCreateService({
      customerId: acct.customerId,
      productId: product.id,
      kind: kindOf("vps"),
      status: ServiceStatus.ACTIVE,
      hostname,
    });
    const { document } = await billing.adminCreateInvoice({ serviceId: service!.id });
    const placed = await api("POST", "/api/v1/orders", {
      key: acct.key,
      body: { productId: product.id, billingCycle: "monthly" },
    });
    assert.equal(placed.status, 201, placed.text);
    const staff = await staffMember(["view_clients"]);
    const v = await signInVisitor(GATEWAY, "admin", staff.email);
    const customer = `/admin/customers/${acct.customerId}`;
    const r = await v.get(`${customer}/documents`);
    assert.equal(r.status, 200);
    const row = (n: string) => r.text.split("<tr>").find((x) => x.includes(n)) ?? "";
    assert.ok(
      row(document!.number).includes(`<a href="${customer}/services/${service!.id}">${hostname}</a>`),
      "the invoice links the service's staff page by hostname",
    );
    assert.ok(row(placed.body.data.proforma.number).includes(placed.body.data.order.order_number));

    // Paid, the proforma says which invoice it became, and the invoice which proforma it was.
    await addCredit(acct, "20");
    const paid = await api("POST", `/api/v1/proformas/${placed.body.data.proforma.id}/pay`, {
      key: acct.key,
      body: {},
    });
    assert.equal(paid.status, 200, paid.text);
    const inv = paid.body.data.invoice.invoice_number as string;
    const after = await v.get(`${customer}/documents`);
    const rowAfter = (n: string) =>
      after.text.split("<tr>").find((x) => x.startsWith(`<td class="mono">${n}</td>`)) ?? "";
    assert.ok(rowAfter(placed.body.data.proforma.number).includes(`became <span class="mono">${inv}</span>`));
    assert.ok(rowAfter(inv).includes(`(was <span class="mono">${placed.body.data.proforma.number}</span>)`));
  });
});
