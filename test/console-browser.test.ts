/**
 * The VPS's Console page in a real browser (Chromium through playwright-core): the terminal
 * (xterm.js, served by the gateway) opens the simulator's console, shows its banner and echoes
 * what is typed, with no request refused by the page's CSP, and the page passes axe.
 */
import assert from "node:assert/strict";
import { after, afterEach, before, describe, it } from "node:test";
import { GATEWAY, newMachine } from "./helpers.ts";
import { fitsWidth, portalOwner, signIn } from "./portal-pages.ts";
import { assertAccessible, type BrowserHandle, browserMissing, launchBrowser } from "./support/browser.ts";

const missing = browserMissing();
if (missing) process.stderr.write(`console-browser tests skipped: ${missing}\n`);

describe("the Console page in a browser", { skip: missing }, () => {
  let browser: BrowserHandle;
  before(async () => {
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
  });
  afterEach(() => browser?.closeTestPages());

  for (const width of [1280, 390]) {
    it(`opens the terminal on the console at ${width} px: the simulator's banner, typed lines echoed, axe clean`, async () => {
      const owner = await portalOwner();
      const vps = await newMachine({
        customerId: owner.customerId,
        ownerId: owner.ownerId,
        key: "",
        keyId: "",
      });
      const { page } = await browser.newPage(width);
      const refusals: string[] = [];
      page.on("console", (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) refusals.push(m.text());
      });
      await signIn(page, "portal", owner.email);
      await page.goto(`${GATEWAY}/portal/services/${vps}`);
      await page.getByRole("link", { name: "Console" }).click();
      await page.getByRole("button", { name: "Open the console" }).click();
      await page.getByText("Connected. Type into the terminal.").waitFor();
      const rows = page.locator("#console .xterm-rows");
      await rows
        .getByText(/Simulated console/)
        .first()
        .waitFor();
      await page.keyboard.type("hello browser");
      await page.keyboard.press("Enter");
      await rows.getByText("echo: hello browser").waitFor();
      await assertAccessible(page);
      assert.deepEqual(refusals, [], "nothing refused by the page's CSP");
      assert.equal(await fitsWidth(page), true, `the console page fits ${width} px`);
    });
  }
});
