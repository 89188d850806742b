/**
 * The page tests' Chromium: started without the WebUI windows nobody looks at, and still with every
 * feature Playwright switches off (test/support/browser.ts says why both).
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, it } from "node:test";
import {
  axeViolations,
  browserMissing,
  launchBrowser,
  PLAYWRIGHT_DISABLED_FEATURES,
  seriousViolations,
} from "./support/browser.ts";
import { chromiumPath, FULL_CHROMIUM, HEADLESS_SHELL } from "./support/chromium-path.ts";

/** The features playwright-core passes in its own --disable-features, read from its source. */
function playwrightDisabledFeatures(): string[] {
  const lib = path.join(
    path.dirname(createRequire(import.meta.url).resolve("playwright-core/package.json")),
    "lib",
  );
  const candidates = [
    path.join(lib, "coreBundle.js"),
    path.join(lib, "server", "chromium", "chromiumSwitches.js"),
  ].filter((f) => existsSync(f));
  for (const file of candidates) {
    const list = /disabledFeatures = \[([\s\S]*?)\]/.exec(readFileSync(file, "utf8"))?.[1];
    if (list) return [...list.matchAll(/^\s*"([^"]+)"/gm)].map((m) => m[1] ?? "");
  }
  throw new Error(`playwright-core's disabled features were not found in ${candidates.join(", ") || lib}`);
}

describe("the page tests' Chromium", () => {
  it("drives the Chromium CHROMIUM_PATH names, else the headless shell where installed, else the full browser; an empty CHROMIUM_PATH counts as unset", () => {
    const given = process.env.CHROMIUM_PATH;
    const otherwise = existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : FULL_CHROMIUM;
    try {
      process.env.CHROMIUM_PATH = "/opt/another/chromium";
      assert.equal(chromiumPath(), "/opt/another/chromium");
      process.env.CHROMIUM_PATH = "";
      assert.equal(chromiumPath(), otherwise);
      delete process.env.CHROMIUM_PATH;
      assert.equal(chromiumPath(), otherwise);
    } finally {
      if (given === undefined) delete process.env.CHROMIUM_PATH;
      else process.env.CHROMIUM_PATH = given;
    }
  });

  it("switches off every feature Playwright does", () => {
    const theirs = playwrightDisabledFeatures();
    assert.ok(theirs.length > 5, `read ${theirs.length} features from playwright-core`);
    assert.deepEqual(
      theirs.filter((f) => !PLAYWRIGHT_DISABLED_FEATURES.includes(f)),
      [],
      "add these to PLAYWRIGHT_DISABLED_FEATURES in test/support/browser.ts",
    );
  });

  // The full browser's windows have an address bar; the headless shell the tests prefer has none.
  it("opens a page in the full browser without building the address bar's WebUI popups", {
    skip: existsSync(FULL_CHROMIUM)
      ? undefined
      : `no full Chromium at ${FULL_CHROMIUM} (the headless shell has no address bar)`,
  }, async () => {
    const handle = await launchBrowser(FULL_CHROMIUM);
    try {
      const { page } = await handle.newPage();
      await page.goto("about:blank");
      const cdp = await handle.browser.newBrowserCDPSession();
      const { targetInfos } = (await cdp.send("Target.getTargets")) as {
        targetInfos: { type: string; url: string }[];
      };
      assert.deepEqual(
        targetInfos.filter((t) => t.url.startsWith("chrome://")).map((t) => t.url),
        [],
        "no chrome:// pages beside the test's own",
      );
    } finally {
      await handle.close();
    }
  });

  it("closes the pages opened for a test after it, and keeps the file's page open", {
    skip: browserMissing(),
  }, async () => {
    const handle = await launchBrowser();
    try {
      const kept = await handle.newPage(1280, "file");
      const first = await handle.newPage();
      const second = await handle.newPage(390);
      assert.equal(handle.browser.contexts().length, 3);
      await handle.closeTestPages();
      assert.deepEqual(handle.browser.contexts(), [kept.context], "only the file's context is open");
      assert.equal(first.page.isClosed() && second.page.isClosed(), true);
      await kept.page.setContent("<p>still here</p>");
      const later = await handle.newPage();
      await handle.closeTestPages();
      assert.equal(later.page.isClosed(), true, "a page opened after a close is closed by the next");
      assert.equal(kept.page.isClosed(), false);
    } finally {
      await handle.close();
    }
  });

  it("names an inaccessible page's violations with their elements, and none on a clean page", {
    skip: browserMissing(),
  }, async () => {
    const handle = await launchBrowser();
    try {
      const { page } = await handle.newPage();
      await page.setContent(
        '<!doctype html><html lang="en"><head><title>t</title></head><body><main><h1>Form</h1>' +
          '<input id="nameless"><input id="nameless2"><img src="data:," id="bare"></main></body></html>',
      );
      const serious = await seriousViolations(page);
      assert.deepEqual(serious.map((v) => [v.id, v.impact, v.nodes.map((n) => n.target.join(" "))]).sort(), [
        ["image-alt", "critical", ["#bare"]],
        // Every element of a violation, not only the first (axe's resultTypes cuts the other kinds).
        ["label", "critical", ["#nameless", "#nameless2"]],
      ]);
      assert.ok(
        serious.every((v) => v.help.length > 0),
        "each violation says what it asks for",
      );
      await page.setContent(
        '<!doctype html><html lang="en"><head><title>t</title></head><body><main><h1>Form</h1>' +
          '<label for="named">Name</label><input id="named"></main></body></html>',
      );
      assert.deepEqual(await axeViolations(page), []);
    } finally {
      await handle.close();
    }
  });
});
