/**
 * Names instead of ids (issue 29 §3) as a person sees them, in Chromium at 1280 and 390 px: the
 * invoices, proformas and orders lists and their pages show the service's hostname, the order's
 * and the documents' numbers and "became INV-…, paid", fit the screen and pass every axe rule.
 */
import assert from "node:assert/strict";
import { after, afterEach, before, describe, it } from "node:test";
import { ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { ServiceAction } from "@hb/contracts/hb/billing/v1/services_pb";
import { addCredit, api, auth, billing, GATEWAY, newProduct, unique } from "./helpers.ts";
import { fitsWidth, portalOwner, signIn } from "./portal-pages.ts";
import { assertAccessible, type BrowserHandle, browserMissing, launchBrowser } from "./support/browser.ts";

const missing = browserMissing();
if (missing) process.stderr.write(`portal-names-browser tests skipped: ${missing}\n`);

describe("names in the portal, in a browser", { skip: missing }, () => {
  let browser: BrowserHandle;
  before(async () => {
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
  });
  afterEach(() => browser?.closeTestPages());

  it("documents and orders name services and numbers, fit 1280 and 390 px and pass every axe rule", async () => {
    const owner = await portalOwner();
    const { secretKey: key } = await auth.createKey({
      personId: owner.ownerId,
      label: "checks",
      scopes: ["orders", "billing"],
      ipAllowlist: "",
    });
    const product = await newProduct("vps", { monthly: "2.0000" });
    const hostname = `${unique("shown")}.example.test`.toLowerCase();
    const placed = await api("POST", "/api/v1/orders", {
      key,
      body: { items: [0, 1].map(() => ({ productId: product.id, billingCycle: "monthly", hostname })) },
    });
    assert.equal(placed.status, 201, placed.text);
    const proforma = placed.body.data.proforma as { id: string; number: string };
    await addCredit({ customerId: owner.customerId, ownerId: owner.ownerId, key, keyId: "" }, "10.0000");
    const paid = await api("POST", `/api/v1/proformas/${proforma.id}/pay`, { key, body: {} });
    assert.equal(paid.status, 200, paid.text);
    const invoiceNumber = paid.body.data.invoice.invoice_number as string;
    const { service } = await billing.adminCreateService({
      customerId: owner.customerId,
      productId: product.id,
      kind: ProductKind.VPS,
      status: ServiceStatus.ACTIVE,
      hostname,
    });
    await billing.adminCreateInvoice({ serviceId: service!.id });
    const gone = await api("POST", "/api/v1/orders", {
      key,
      body: { productId: product.id, billingCycle: "monthly" },
    });
    await billing.adminSetServiceState({
      serviceId: gone.body.data.services[0].id,
      action: ServiceAction.TERMINATE,
      reason: "test",
    });

    for (const width of [1280, 390]) {
      const { page } = await browser.newPage(width);
      await signIn(page, "portal", owner.email);
      const pages: [string, string][] = [
        ["/portal/proformas", `became ${invoiceNumber}`],
        [`/portal/proformas/${proforma.id}`, "not a second charge"],
        ["/portal/invoices", hostname],
        ["/portal/orders", "all terminated"],
        [`/portal/orders/${gone.body.data.order.id}`, "Every service of this order is terminated"],
      ];
      for (const [path, words] of pages) {
        const r = await page.goto(`${GATEWAY}${path}`);
        assert.equal(r?.status(), 200, path);
        await page.getByText(words).first().waitFor();
        await assertAccessible(page, { every: true, where: `${path} at ${width} px` });
        assert.equal(await fitsWidth(page), true, `${path} fits ${width} px`);
      }
    }
  });
});
