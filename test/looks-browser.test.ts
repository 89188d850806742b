/**
 * The portal's look on a phone and a desk (issue 29 §7), in Chromium through playwright-core: at
 * 390 px a list's table reads as cards, so the services list shows each service's status, price
 * and next due date and the API keys page is no wider than the screen; the menu folds behind a
 * button; and every portal page passes axe-core at 1280 and 390 px.
 */
import assert from "node:assert/strict";
import { after, afterEach, before, describe, it } from "node:test";
import { ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import type { Page } from "playwright-core";
import { auth, billing, GATEWAY, newMachine } from "./helpers.ts";
import { fitsWidth, planAndBigger, portalMember, portalOwner, signIn } from "./portal-pages.ts";
import { assertAccessible, type BrowserHandle, browserMissing, launchBrowser } from "./support/browser.ts";

const missing = browserMissing();
if (missing) process.stderr.write(`looks-browser tests skipped: ${missing}\n`);

/** What the person sees of an element: its box inside the window and not clipped by a scroller. */
const seen = (page: Page, selector: string) =>
  page.evaluate(`(() => {
    const el = document.querySelector(${JSON.stringify(selector)});
    if (!el) return "missing";
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) return "not shown";
    if (box.left < 0 || box.right > window.innerWidth) return "outside the window (" + box.left + " to " + box.right + ")";
    for (let p = el.parentElement; p; p = p.parentElement) {
      const outer = p.getBoundingClientRect();
      if (getComputedStyle(p).overflowX !== "visible" && (box.left < outer.left || box.right > outer.right + 0.5))
        return "scrolled out of sight";
    }
    return "seen";
  })()`) as Promise<string>;

/** The label a card shows beside a cell (its column's heading), or "" when it shows none. */
const cellLabel = (page: Page, selector: string) =>
  page.evaluate(`(() => {
    const el = document.querySelector(${JSON.stringify(selector)});
    const c = el ? getComputedStyle(el, "::before").content : "none";
    return c === "none" || c === "normal" ? "" : c;
  })()`) as Promise<string>;

describe("the portal's look at 390 and 1280 px", { skip: missing }, () => {
  let browser: BrowserHandle;
  let owner: Awaited<ReturnType<typeof portalOwner>>;
  let vps = "";
  let planned = "";
  /** The plan's bigger sibling (other tests' plans are upgrade targets too, so it is named exactly). */
  let biggerName = "";

  before(async () => {
    [browser, owner] = await Promise.all([launchBrowser(), portalOwner()]);
    const acct = { customerId: owner.customerId, ownerId: owner.ownerId, key: "", keyId: "" };
    vps = await newMachine(acct, { kind: "vps" });
    const { product, bigger } = await planAndBigger();
    biggerName = bigger.name;
    planned = (
      await billing.adminCreateService({
        customerId: owner.customerId,
        productId: product.id,
        kind: ProductKind.VPS,
        status: ServiceStatus.ACTIVE,
      })
    ).service!.id;
    // Keys with every column filled: an allowlist, an expiry, several scopes.
    for (const label of ["deploy script on the build server", "backup"])
      await auth.createKey({
        personId: owner.ownerId,
        label,
        scopes: ["services", "orders", "billing"],
        ipAllowlist: "203.0.113.0/24\n198.51.100.7\n2001:db8::/32",
      });
    await portalMember(owner.customerId, ["view_services"]);
  });
  after(async () => {
    await browser?.close();
  });
  afterEach(() => browser?.closeTestPages());

  /** Every axe-core violation, whatever its impact (the other page tests ask serious ones only). */
  const accessible = (page: Page) => assertAccessible(page, { every: true });

  it("at 390 px the services list shows each service's status, price and next due date, labelled, without scrolling sideways", async () => {
    const { page } = await browser.newPage(390);
    await signIn(page, "portal", owner.email);
    await page.goto(`${GATEWAY}/portal/services`);
    assert.equal(await fitsWidth(page), true, "the services page fits 390 px");
    const row = `tr:has(a[href="/portal/services/${planned}"])`;
    for (const [column, label] of [
      [4, "Status"],
      [5, "Price"],
      [6, "Next due"],
    ] as const) {
      const cell = `${row} td:nth-child(${column})`;
      assert.equal(await seen(page, cell), "seen", `${label} of the service`);
      assert.match(await cellLabel(page, cell), new RegExp(label), `${label} is labelled on its card`);
    }
    await page
      .locator(row)
      .getByText(/10\.00/)
      .waitFor();
  });

  it("at 390 px the API keys page is no wider than the screen and shows every column of a key", async () => {
    const { page } = await browser.newPage(390);
    await signIn(page, "portal", owner.email);
    await page.goto(`${GATEWAY}/portal/keys`);
    assert.equal(await fitsWidth(page), true, "the keys page fits 390 px");
    const widest = (await page.evaluate(
      `Math.max(...[...document.querySelectorAll("table, .table-wrap")].map((t) => t.scrollWidth))`,
    )) as number;
    assert.ok(widest <= 390, `the keys table is ${widest} px wide`);
    for (let column = 1; column <= 8; column++)
      assert.equal(
        await seen(page, `table tbody tr:first-child td:nth-child(${column})`),
        "seen",
        `column ${column}`,
      );
  });

  it("at 390 px the menu folds behind a Menu button that opens it", async () => {
    const { page } = await browser.newPage(390);
    await signIn(page, "portal", owner.email);
    await page.goto(`${GATEWAY}/portal/services`);
    const menu = page.getByRole("button", { name: "Menu" });
    assert.equal(await menu.getAttribute("aria-expanded"), "false");
    assert.equal(await page.getByRole("navigation", { name: "Main" }).isVisible(), false);
    await menu.click();
    assert.equal(await menu.getAttribute("aria-expanded"), "true");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "API Keys" }).click();
    await page.waitForURL(/\/portal\/keys$/);
    await accessible(page);

    const desk = (await browser.newPage(1280)).page;
    await signIn(desk, "portal", owner.email);
    assert.equal(await desk.getByRole("button", { name: "Menu" }).count(), 0, "no Menu button at 1280 px");
    assert.equal(await desk.getByRole("navigation", { name: "Main" }).isVisible(), true);
  });

  it("a button whose name says more than its words starts its name with them (label in name, WCAG 2.5.3)", async () => {
    const { page } = await browser.newPage(1280);
    await signIn(page, "portal", owner.email);
    await page.goto(`${GATEWAY}/portal/services/${planned}/upgrades`);
    const upgrade = page.getByRole("button", {
      name: `Request this upgrade (Upgrade to ${biggerName})`,
      exact: true,
    });
    assert.equal(await upgrade.count(), 1, "the XL upgrade's button is named by its words and its plan");
  });

  it("every portal page passes axe-core at 1280 and 390 px", async () => {
    const paths = [
      "/portal/services",
      `/portal/services/${vps}`,
      `/portal/services/${vps}/reinstall`,
      `/portal/services/${vps}/password`,
      `/portal/services/${vps}/copies`,
      `/portal/services/${vps}/addons`,
      `/portal/services/${vps}/console`,
      `/portal/services/${planned}`,
      `/portal/services/${planned}/upgrades`,
      `/portal/services/${planned}/cancel`,
      "/portal/order",
      "/portal/orders",
      "/portal/invoices",
      "/portal/proformas",
      "/portal/balance",
      "/portal/add-credit",
      "/portal/ssh-keys",
      "/portal/jobs",
      "/portal/keys",
      "/portal/team",
      "/portal/reseller",
    ];
    for (const width of [1280, 390]) {
      const { page } = await browser.newPage(width);
      await signIn(page, "portal", owner.email);
      for (const path of paths) {
        const r = await page.goto(`${GATEWAY}${path}`);
        assert.equal(r?.status(), 200, path);
        await accessible(page);
        assert.equal(await fitsWidth(page), true, `${path} fits ${width} px`);
      }
    }
  });
});
