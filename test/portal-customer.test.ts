/**
 * The portal's customer pages in a real browser (Chromium through playwright-core): each area's
 * action done by clicking, then checked over the API with the same person's key (a reboot clicked
 * in the portal is a job in GET /jobs; a proforma paid in the portal reads paid), the API's rules
 * applied to the portal (a member without the permission gets the API's refusal), forms that act
 * once (the same form sent twice places one order), a 390 px run and axe-core on every page.
 */
import assert from "node:assert/strict";
import { after, afterEach, before, describe, it } from "node:test";
import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { WebhooksStaffService } from "@hb/contracts/hb/webhooks/v1/webhooks_staff_pb";
import type { Page } from "playwright-core";
import { newToken } from "../services/gateway/src/pages/customer/once.ts";
import {
  type Account,
  addCredit,
  amountOf,
  api,
  auth,
  billing,
  eventually,
  GATEWAY,
  grpc,
  newMachine,
  newProduct,
} from "./helpers.ts";
import {
  csrfIn,
  fitsWidth,
  planAndBigger,
  portalMember,
  portalOwner,
  signIn,
  signInVisitor,
  staffMember,
} from "./portal-pages.ts";
import {
  assertAccessible,
  type BrowserHandle,
  browserMissing,
  launchBrowser,
  waitForUrlAfterDoubleSubmit,
} from "./support/browser.ts";

const missing = browserMissing();
if (missing) process.stderr.write(`portal-customer tests skipped: ${missing}\n`);

/** One account for the whole file: its owner signs in, and a key of theirs checks over the API. */
async function customer(): Promise<Account & { email: string }> {
  const owner = await portalOwner();
  const { secretKey, key } = await auth.createKey({
    personId: owner.ownerId,
    label: "checks",
    scopes: ["services", "orders", "billing", "destructive"],
    ipAllowlist: "",
  });
  return {
    customerId: owner.customerId,
    ownerId: owner.ownerId,
    key: secretKey,
    keyId: key!.id,
    email: owner.email,
  };
}

const webhooks = grpc([WebhooksService, WebhooksStaffService], "WEBHOOKS_ADDR");
const onceIn = (html: string) => /name="_once" value="([^"]+)"/.exec(html)?.[1] ?? "";

describe("the portal's customer pages", { skip: missing }, () => {
  let browser: BrowserHandle;
  let acct: Account & { email: string };
  let page: Page;
  let vps: string;

  before(async () => {
    [browser, acct] = await Promise.all([launchBrowser(), customer()]);
    vps = await newMachine(acct, { kind: "vps" });
    page = (await browser.newPage(1280, "file")).page;
    await signIn(page, "portal", acct.email);
  });
  after(async () => {
    await browser?.close();
  });
  afterEach(() => browser?.closeTestPages());

  const accessible = (page: Page) => assertAccessible(page);

  it("a reboot clicked on the service page is a job in GET /jobs, and the job page follows it to its end", async () => {
    await page.goto(`${GATEWAY}/portal/services`);
    await accessible(page);
    await page.locator(`a[href="/portal/services/${vps}"]`).waitFor();
    await page.goto(`${GATEWAY}/portal/services/${vps}`);
    await accessible(page);
    await page.getByRole("button", { name: "reboot", exact: true }).click();
    await page.waitForURL(/\/portal\/jobs\/[0-9a-f-]{36}/);
    const jobId = /\/portal\/jobs\/([0-9a-f-]{36})/.exec(page.url())?.[1];
    const jobs = await api("GET", `/api/v1/jobs?resource=${vps}`, { key: acct.key });
    assert.equal(jobs.status, 200);
    assert.ok(
      jobs.body.data.jobs.some(
        (j: { id: string; action: string }) => j.id === jobId && j.action === "reboot",
      ),
      "the portal's reboot is the API's job",
    );
    // The page was loaded while the job ran (or after): without a reload it ends as succeeded.
    await page.getByText("succeeded").first().waitFor({ timeout: 20_000 });
    await accessible(page);
  });

  it("a reinstall asks for confirmation, takes the chosen image and shows its job until it ends", async () => {
    const machine = await newMachine(acct, { kind: "vps" });
    await page.goto(`${GATEWAY}/portal/services/${machine}/reinstall`);
    await accessible(page);
    await page.getByLabel("debian-12").check();
    await page.getByLabel("New root password").fill("a-new-root-password");
    await page.getByRole("button", { name: "Reinstall and erase the disk" }).click();
    // Without the confirmation box ticked nothing happens, and the box says why.
    await page.locator("#f-confirm-error").waitFor();
    assert.equal(
      (await api("GET", `/api/v1/jobs?resource=${machine}&action=reinstall`, { key: acct.key })).body.data
        .jobs.length,
      0,
    );
    await accessible(page);
    await page.getByLabel("debian-12").check();
    await page.getByLabel("New root password").fill("a-new-root-password");
    await page.getByLabel("I understand that every file on this machine is erased").check();
    await page.getByRole("button", { name: "Reinstall and erase the disk" }).click();
    await page.waitForURL(/\/portal\/jobs\/[0-9a-f-]{36}/);
    // The page was loaded while the job ran (it then follows it) or after it ended (a simulated
    // reinstall takes 0.3 s; on a loaded host the page came later): either way it ends as succeeded.
    await page.locator("#job").waitFor();
    await page.getByText("succeeded").first().waitFor({ timeout: 30_000 });
    const jobs = await api("GET", `/api/v1/jobs?resource=${machine}`, { key: acct.key });
    assert.ok(jobs.body.data.jobs.some((j: { action: string }) => j.action === "reinstall"));
  });

  it("a snapshot taken in the portal is the API's, and deleting it asks first", async () => {
    const snapshots = async () =>
      (await api("GET", `/api/v1/vps/${vps}/snapshots`, { key: acct.key })).body.data.snapshots as {
        id: string;
        name: string;
        status: string;
      }[];
    await page.goto(`${GATEWAY}/portal/services/${vps}/copies`);
    await accessible(page);
    await page.getByLabel("Snapshot name").fill("before-upgrade");
    await page.getByRole("button", { name: "Take a snapshot" }).click();
    await page.getByRole("status").filter({ hasText: "Snapshot started" }).waitFor();
    const taken = (await snapshots()).find((c) => c.name === "before-upgrade");
    assert.ok(taken, "the API lists the snapshot");
    await eventually(
      async () => (await snapshots()).find((c) => c.id === taken.id)?.status === "available",
      15_000,
    );
    await page.goto(`${GATEWAY}/portal/services/${vps}/snapshots/${taken.id}/delete`);
    await accessible(page);
    await page.getByRole("button", { name: "Delete the snapshot" }).click();
    await page.getByRole("status").filter({ hasText: "deleted" }).waitFor();
    await eventually(async () => !(await snapshots()).some((c) => c.id === taken.id), 15_000);
  });

  it("a member without the power permission is drawn no power button, and a forged one gets the API's own refusal", async () => {
    const member = await portalMember(acct.customerId, ["view_services"]);
    const p = (await browser.newPage(1280)).page;
    await signIn(p, "portal", member.email);
    await p.goto(`${GATEWAY}/portal/services/${vps}`);
    await p.getByText("Power actions need the power or manage permission").waitFor();
    assert.equal(await p.getByRole("button", { name: "reboot", exact: true }).count(), 0);
    await p.context().close();
    // The page table decides what is drawn; the API still decides each call.
    const v = await signInVisitor(GATEWAY, "portal", member.email);
    const shown = await v.get(`/portal/services/${vps}`);
    const r = await v.post(`/portal/services/${vps}/power`, {
      _csrf: csrfIn(shown.text),
      _once: newToken(),
      action: "reboot",
    });
    assert.equal(r.status, 303);
    assert.match((await v.get(r.location)).text, /Your account permissions do not allow this action/);
  });

  it("a member's menu shows the areas their permissions open, and the portal opens on one of them", async () => {
    const member = await portalMember(acct.customerId, ["view_invoices"]);
    const v = await signInVisitor(GATEWAY, "portal", member.email);
    const root = await v.get("/portal/");
    assert.equal(root.location, "/portal/invoices");
    const invoices = await v.get(root.location);
    assert.equal(invoices.status, 200);
    const menu = /<nav aria-label="Main">(.*?)<\/nav>/s.exec(invoices.text)?.[1] ?? "";
    assert.match(menu, />Invoices</);
    assert.doesNotMatch(menu, />Services<|>Balance<|>SSH keys</);
    // The menu is a hint: the API still decides, with its own words.
    const services = await v.get("/portal/services");
    assert.equal(services.status, 403);
    assert.match(services.text, /Your account permissions do not allow this action/);
  });

  it("a suspended account reads its services in the portal under a banner, is drawn no power button, and a forged one is refused with the API's words", async () => {
    const owner = await portalOwner();
    const machine = await newMachine({
      customerId: owner.customerId,
      ownerId: owner.ownerId,
      key: "",
      keyId: "",
    });
    await auth.setCustomerStatus({ customerId: owner.customerId, status: CustomerStatus.SUSPENDED });
    const v = await signInVisitor(GATEWAY, "portal", owner.email);
    const shown = await v.get(`/portal/services/${machine}`);
    assert.equal(shown.status, 200, "reading still works");
    assert.match(shown.text, /id="account-banner"><strong>This account is suspended/);
    assert.doesNotMatch(shown.text, /name="action"/, "no power button");
    const r = await v.post(`/portal/services/${machine}/power`, {
      _csrf: csrfIn(shown.text),
      _once: newToken(),
      action: "reboot",
    });
    assert.equal(r.status, 303);
    const back = await v.get(r.location);
    assert.match(back.text, /role="alert" id="page-error">The account is suspended: read access only</);
  });

  it("the portal's way into the API is not reachable from outside: a session cookie opens nothing under /api/v1", async () => {
    const v = await signInVisitor(GATEWAY, "portal", acct.email);
    const cookie = v.setCookies.find((c) => c.startsWith("hb_portal_session="))?.split(";")[0] ?? "";
    assert.ok(cookie);
    for (const [method, path] of [
      ["GET", "/api/v1/services"],
      ["POST", `/api/v1/vps/${vps}/power/reboot`],
    ]) {
      const r = await fetch(`${GATEWAY}${path}`, { method, headers: { cookie } });
      assert.equal(r.status, 401, `${method} ${path}`);
    }
  });

  it("an order placed in the portal is one order over the API even when its form is sent twice", async () => {
    const product = await newProduct("vps", { monthly: "10.0000" });
    const v = await signInVisitor(GATEWAY, "portal", acct.email);
    const form = await v.get(`/portal/order/${product.id}`);
    assert.equal(form.status, 200);
    const fields = {
      _csrf: csrfIn(form.text),
      _once: onceIn(form.text),
      billingCycle: "monthly",
      hostname: "twice.example.test",
      osImage: "debian-12",
      quantity: "1",
    };
    // A double click: both submissions arrive together; each is answered with the same redirect.
    const [a, b] = await Promise.all([
      v.post(`/portal/order/${product.id}`, fields),
      v.post(`/portal/order/${product.id}`, fields),
    ]);
    assert.equal(a.status, 303, a.text);
    assert.equal(b.location, a.location);
    const orders = await api("GET", "/api/v1/orders?limit=100", { key: acct.key });
    const mine = orders.body.data.orders.filter((o: { id: string }) => a.location.includes(o.id));
    assert.equal(mine.length, 1, "one order");
    assert.equal(orders.body.data.pagination.total, 1, "no second order");
  });

  it("a proforma paid from credit in the portal reads paid over the API, and the order form's errors sit by their fields", async () => {
    const product = await newProduct("vps", { monthly: "7.5000" });
    await page.goto(`${GATEWAY}/portal/order/${product.id}`);
    await accessible(page);
    await page.getByLabel("Hostname").fill("not a hostname!");
    await page.getByRole("button", { name: "Place the order" }).click();
    const hostname = page.getByLabel("Hostname");
    await page.locator("#f-hostname-error").waitFor();
    assert.equal(
      await hostname.evaluate((el) => el === el.ownerDocument.activeElement),
      true,
      "focus on the field in error",
    );
    await accessible(page);

    await hostname.fill("pay.example.test");
    await page.getByRole("button", { name: "Place the order" }).click();
    await page.waitForURL(/\/portal\/orders\/[0-9a-f-]{36}/);
    await page.getByRole("status").waitFor();
    await accessible(page);
    await page.getByRole("link", { name: /^PRO-/ }).click();
    const proformaId = /\/portal\/proformas\/([0-9a-f-]{36})/.exec(page.url())?.[1];
    assert.ok(proformaId);
    // With no credit the page leads to Add credit; once credit has arrived it pays in one click.
    await page.locator("#add-missing-credit").waitFor();
    await addCredit(acct, "20.0000");
    await page.reload();
    await page.getByRole("button", { name: "Pay from credit" }).dblclick();
    await page.getByRole("status").filter({ hasText: "Paid from credit" }).waitFor();
    await accessible(page);
    const doc = await api("GET", `/api/v1/proformas/${proformaId}`, { key: acct.key });
    assert.equal(doc.body.data.status, "paid");
    const bal = await api("GET", "/api/v1/account/balance", { key: acct.key });
    assert.equal(bal.body.data.balance, 12.5, "paid once: 20 - 7.50");
    await page.goto(`${GATEWAY}/portal/balance`);
    await page.getByRole("cell", { name: "12.50 EUR" }).first().waitFor();
    await accessible(page);
  });

  it("an add-on bought and given up, and an upgrade requested, in the portal are the API's", async () => {
    await addCredit(acct, "100.0000");
    const { product, bigger } = await planAndBigger();
    await billing.adminAddProductOption({
      productId: product.id,
      name: "Extra IP",
      recurringMonthlyPrice: amountOf("2.0000"),
    });
    const { service } = await billing.adminCreateService({
      customerId: acct.customerId,
      productId: product.id,
      kind: ProductKind.VPS,
      status: ServiceStatus.ACTIVE,
    });
    const id = service!.id;
    const options = async () =>
      (await api("GET", `/api/v1/services/${id}/options`, { key: acct.key })).body.data.options as unknown[];

    await page.goto(`${GATEWAY}/portal/services/${id}/addons`);
    await page.getByText("This service has no add-ons.").waitFor();
    await accessible(page);
    await page.getByLabel("Add-on", { exact: true }).selectOption({ label: "Extra IP" });
    await page.getByRole("button", { name: "Buy the add-on" }).click();
    await page.getByRole("status").filter({ hasText: "bought" }).waitFor();
    assert.equal((await options()).length, 1);
    await accessible(page);
    await page.getByRole("link", { name: "Give up" }).click();
    await accessible(page);
    await page.getByRole("button", { name: "Give up the add-on" }).click();
    await page.getByRole("status").filter({ hasText: "given up" }).waitFor();
    assert.equal((await options()).length, 0);

    await page.goto(`${GATEWAY}/portal/services/${id}/upgrades`);
    await accessible(page);
    await page.getByRole("button", { name: `Upgrade to ${bigger.name}` }).click();
    await page.waitForURL(/\/portal\/upgrades\/[0-9a-f-]{36}/);
    const upgradeId = /\/portal\/upgrades\/([0-9a-f-]{36})/.exec(page.url())?.[1];
    await accessible(page);
    const viaApi = await api("GET", `/api/v1/upgrades/${upgradeId}`, { key: acct.key });
    assert.equal(viaApi.status, 200);
    assert.equal(viaApi.body.data.to_product_id, bigger.id);
    if (viaApi.body.data.status === "awaiting_payment") {
      await page.getByRole("button", { name: "Cancel the upgrade" }).click();
      await page.getByRole("status").filter({ hasText: "cancelled" }).waitFor();
      assert.equal(
        (await api("GET", `/api/v1/upgrades/${upgradeId}`, { key: acct.key })).body.data.status,
        "cancelled",
      );
    }
  });

  it("an SSH key added in the portal shows its fingerprint and is the API's; deleting asks first", async () => {
    const line = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq1Zb6k0m4i7sQk3Jx0n1oYc2cL8xkq0m8b5y0p3fWQ laptop";
    await page.goto(`${GATEWAY}/portal/ssh-keys`);
    await page.getByText("No SSH keys stored yet").waitFor();
    await accessible(page);
    await page.getByLabel("Name").fill("laptop");
    await page.getByLabel("Public key").fill(line);
    await page.getByRole("button", { name: "Add the key" }).click();
    await page.getByRole("status").filter({ hasText: "SHA256:" }).waitFor();
    const keys = await api("GET", "/api/v1/ssh-keys", { key: acct.key });
    assert.equal(keys.body.data.ssh_keys.length, 1);
    await page.getByRole("link", { name: "Delete laptop" }).click();
    await accessible(page);
    await page.getByRole("button", { name: "Delete the key" }).click();
    await page.getByRole("status").filter({ hasText: "deleted" }).waitFor();
    assert.equal((await api("GET", "/api/v1/ssh-keys", { key: acct.key })).body.data.ssh_keys.length, 0);
  });

  it("Create key sent twice makes one key, and its secret is shown on one page view only", async () => {
    const v = await signInVisitor(GATEWAY, "portal", acct.email);
    const form = await v.get("/portal/keys");
    const fields = { _csrf: csrfIn(form.text), _once: onceIn(form.text), label: "twice", scopes: "services" };
    const before = (await auth.listKeys({ personId: acct.ownerId })).keys.length;
    const [a, b] = await Promise.all([v.post("/portal/keys", fields), v.post("/portal/keys", fields)]);
    assert.deepEqual([a.status, b.status], [303, 303]);
    assert.equal(b.location, a.location);
    assert.equal((await auth.listKeys({ personId: acct.ownerId })).keys.length, before + 1, "one key");
    const shown = await v.get(a.location);
    const secret = /id="new-key" class="mono" readonly value="([^"]+)"/.exec(shown.text)?.[1] ?? "";
    assert.match(secret, /^hbk_/);
    assert.equal((await api("GET", "/api/v1/account", { key: secret })).status, 200);
    const again = await v.get(a.location);
    assert.equal(again.text.includes(secret), false, "not shown a second time");
    assert.match(again.text, /shown once and cannot be shown again/);
  });

  it("a pending partner can neither save a webhook URL nor queue a test event in the portal", async () => {
    const owner = await portalOwner();
    await auth.createPartner({ customerId: owner.customerId, status: PartnerStatus.PENDING });
    const v = await signInVisitor(GATEWAY, "portal", owner.email);
    const pageText = (await v.get("/portal/reseller")).text;
    assert.match(pageText, /The reseller partner profile is pending: read access only/);
    const csrf = csrfIn(pageText);
    const saved = await v.post("/portal/reseller/webhook", {
      _csrf: csrf,
      url: "https://hooks.example.com/x",
    });
    assert.equal(saved.status, 403);
    const test = await v.post("/portal/reseller/test", { _csrf: csrf });
    assert.equal(test.status, 403);
    assert.equal((await webhooks.getWebhook({ partnerId: owner.customerId })).url, "");
    assert.equal(
      (await webhooks.listDeliveries({ partnerId: owner.customerId, limit: 10 })).deliveries.length,
      0,
    );
  });

  it("a bank transfer asked for in the portal and confirmed by staff in the admin panel is on the balance over the API", async () => {
    const before = (await api("GET", "/api/v1/account/balance", { key: acct.key })).body.data
      .balance as number;
    await page.goto(`${GATEWAY}/portal/add-credit`);
    await accessible(page);
    assert.equal(
      await page.getByRole("heading", { name: "Pay by card" }).count(),
      0,
      "no card provider here",
    );
    await page.getByLabel("Amount (EUR)").fill("2");
    await page.getByRole("button", { name: "Get transfer details" }).click();
    await page.locator("#f-bank-amount-error").waitFor();
    await accessible(page);
    await page.getByLabel("Amount (EUR)").fill("60");
    await page.getByRole("button", { name: "Get transfer details" }).dblclick();
    await waitForUrlAfterDoubleSubmit(page, /\/portal\/add-credit\/[0-9a-f-]{36}/);
    await page.getByRole("status").waitFor();
    await accessible(page);
    const reference = /HB-[0-9A-Z]{4}-[0-9A-Z]{4}/.exec(
      (await page.locator("main").textContent()) ?? "",
    )?.[0];
    assert.ok(reference, "the page shows the reference");

    const staff = await staffMember(["view_clients", "edit_clients"]);
    const desk = (await browser.newPage(1280)).page;
    await signIn(desk, "admin", staff.email);
    await desk.goto(`${GATEWAY}/admin/bank-transfers`);
    await accessible(desk);
    await desk.getByLabel(`Amount received for ${reference}`).fill("59.90");
    await desk
      .getByRole("row")
      .filter({ hasText: reference })
      .getByRole("button", { name: "Confirm received" })
      .click();
    await desk.getByRole("status").filter({ hasText: reference }).waitFor();
    await accessible(desk);
    const after = (await api("GET", "/api/v1/account/balance", { key: acct.key })).body.data
      .balance as number;
    assert.equal(Math.round((after - before) * 100), 5990, "credited once, what arrived");
    await page.reload();
    await page.getByText("59.90 EUR").first().waitFor();
  });

  it("a short balance's way to pay and the second-order question are usable at 390 px and pass axe-core", async () => {
    const owner = await portalOwner();
    const phone = (await browser.newPage(390)).page;
    await signIn(phone, "portal", owner.email);
    const product = await newProduct("vps", { monthly: "10.0000" });
    const order = async () => {
      await phone.goto(`${GATEWAY}/portal/order/${product.id}`);
      await phone.getByLabel("Hostname").fill("phone.example.test");
      await phone.getByRole("button", { name: "Place the order" }).click();
    };
    await order();
    await phone.waitForURL(/\/portal\/orders\/[0-9a-f-]{36}/);
    await phone.getByRole("link", { name: /^PRO-/ }).click();
    await addCredit({ customerId: owner.customerId, ownerId: owner.ownerId, key: "", keyId: "" }, "3.0000");
    await phone.reload();
    const add = phone.getByRole("link", { name: "Add 7.00 EUR of credit" });
    assert.equal(await add.getAttribute("href"), "/portal/add-credit?amount=7.00");
    assert.equal(await phone.getByLabel(/Amount to pay now/).inputValue(), "3.00");
    assert.equal(await fitsWidth(phone), true);
    await accessible(phone);
    await phone.getByRole("button", { name: "Pay part from credit" }).click();
    await phone.getByRole("status").filter({ hasText: "7.00 EUR is still due" }).waitFor();
    await accessible(phone);

    // Back to the order form and the same order again: a question, then a second order on Yes.
    await order();
    await phone.getByRole("alert").filter({ hasText: "You ordered the same" }).waitFor();
    assert.equal(await fitsWidth(phone), true);
    await accessible(phone);
    await phone.getByRole("button", { name: "Yes, order another" }).click();
    await phone.waitForURL(/\/portal\/orders\/[0-9a-f-]{36}/);
    const { secretKey } = await auth.createKey({
      personId: owner.ownerId,
      label: "count",
      scopes: ["orders"],
      ipAllowlist: "",
    });
    const orders = await api("GET", "/api/v1/orders", { key: secretKey });
    assert.equal(orders.body.data.pagination.total, 2);
  });

  it("every customer page fits 390 px and passes axe-core", async () => {
    const phone = (await browser.newPage(390)).page;
    await signIn(phone, "portal", acct.email);
    const paths = [
      "/portal/services",
      `/portal/services/${vps}`,
      `/portal/services/${vps}/reinstall`,
      `/portal/services/${vps}/password`,
      `/portal/services/${vps}/copies`,
      `/portal/services/${vps}/addons`,
      `/portal/services/${vps}/upgrades`,
      `/portal/services/${vps}/cancel`,
      "/portal/order",
      "/portal/orders",
      "/portal/invoices",
      "/portal/proformas",
      "/portal/balance",
      "/portal/add-credit",
      "/portal/ssh-keys",
      "/portal/jobs",
    ];
    for (const path of paths) {
      const r = await phone.goto(`${GATEWAY}${path}`);
      assert.equal(r?.status(), 200, path);
      assert.equal(await fitsWidth(phone), true, `${path} fits 390 px`);
      await accessible(phone);
    }
  });
});
