/**
 * The reseller panel and the cart in a real browser (Chromium through playwright-core), at 1280
 * and 390 px: each page accessible (axe-core: no serious or critical violation) and as wide as the
 * screen at most, and the live events page showing an event as it is raised (pages.js's
 * EventSource on the page's own stream).
 */
import assert from "node:assert/strict";
import { after, afterEach, before, describe, it } from "node:test";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { BillingCycle, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { OrderPaymentMode } from "@hb/contracts/hb/billing/v1/orders_pb";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import type { Page } from "playwright-core";
import { addCredit, auth, billing, eventually, GATEWAY, newProduct, unique } from "./helpers.ts";
import { fitsWidth, portalOwner, signIn } from "./portal-pages.ts";
import { assertAccessible, type BrowserHandle, browserMissing, launchBrowser } from "./support/browser.ts";
import { publishServiceEvent } from "./support/service-events.ts";

const missing = browserMissing();
if (missing) process.stderr.write(`portal-reseller-browser tests skipped: ${missing}\n`);

describe("the reseller panel and the cart in a browser", { skip: missing }, () => {
  let browser: BrowserHandle;
  before(async () => {
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
  });
  afterEach(() => browser?.closeTestPages());

  async function checked(page: Page, path: string, width: number) {
    await page.goto(`${GATEWAY}${path}`);
    await assertAccessible(page, { where: `${path} at ${width} px` });
    assert.equal(await fitsWidth(page), true, `${path} fits ${width} px`);
  }

  it("every page of the panel and the cart is accessible and fits the screen, at 1280 and 390 px", async () => {
    const owner = await portalOwner();
    await auth.createPartner({ customerId: owner.customerId, status: PartnerStatus.ACTIVE });
    await addCredit({ customerId: owner.customerId, ownerId: owner.ownerId, key: "", keyId: "" }, "100");
    const caller = { customerId: owner.customerId, personId: owner.ownerId, isOwner: true };
    const product = await newProduct("vps", { monthly: "15.0000" });
    const { placed } = await billing.createResellerOrder({
      caller,
      externalOrderId: unique("shop"),
      externalCustomerId: "cust-5",
      paymentMode: OrderPaymentMode.CREDIT,
      items: [{ productId: product.id, billingCycle: BillingCycle.MONTHLY, hostname: unique("web") }],
    });
    const orderId = placed!.order!.id;
    const service = await eventually(async () => {
      const s = (await billing.getResellerOrder({ caller, orderId })).order!.services[0];
      return s?.status === ServiceStatus.ACTIVE ? s : undefined;
    }, 30_000);

    for (const width of [1280, 390]) {
      const { page } = await browser.newPage(width);
      await signIn(page, "portal", owner.email);
      for (const path of [
        "/portal/reseller/orders",
        `/portal/reseller/orders/${orderId}`,
        "/portal/reseller/services",
        `/portal/reseller/services/${service.id}`,
        `/portal/reseller/services/${service.id}/terminate`,
        "/portal/reseller/stream",
        "/portal/cart",
        `/portal/cart/add/${product.id}`,
      ])
        await checked(page, path, width);
    }
  });

  it("the live events page shows an event as it is raised", async () => {
    const owner = await portalOwner();
    await auth.createPartner({ customerId: owner.customerId, status: PartnerStatus.ACTIVE });
    const { page } = await browser.newPage(390);
    await signIn(page, "portal", owner.email);
    await page.goto(`${GATEWAY}/portal/reseller/stream`);
    await page.getByText("Listening: new events appear below").waitFor({ timeout: 10_000 });
    const hostname = unique("live");
    const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
    try {
      await publishServiceEvent(jetstream(nc), process.env.HB_NS ?? "", owner.customerId, { hostname });
    } finally {
      await nc.close();
    }
    const item = page.getByRole("listitem").filter({ hasText: hostname });
    await item.waitFor({ timeout: 15_000 });
    assert.match((await item.textContent()) ?? "", /service\.suspended/);
    await assertAccessible(page);
    assert.equal(await fitsWidth(page), true);
  });

  it("the live events page says the session ended when the partner signs out elsewhere, and stops", async () => {
    const owner = await portalOwner();
    await auth.createPartner({ customerId: owner.customerId, status: PartnerStatus.ACTIVE });
    const { page } = await browser.newPage(1280);
    await signIn(page, "portal", owner.email);
    await page.goto(`${GATEWAY}/portal/reseller/stream`);
    await page.getByText("Listening: new events appear below").waitFor({ timeout: 10_000 });
    // Signed out from another tab of the same browser: the session cookie is the same.
    const other = await page.context().newPage();
    await other.goto(`${GATEWAY}/portal/reseller`);
    await other.getByRole("button", { name: "Sign out" }).click();
    await other.waitForURL(/\/portal\/sign-in/);
    await page
      .getByText("Your session has ended; sign in again to follow events.")
      .waitFor({ timeout: 10_000 });
    await assertAccessible(page);
  });
});
