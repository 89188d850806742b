import assert from "node:assert/strict";
/**
 * A real browser for the page tests: Debian's Chromium driven by playwright-core, one per test
 * file. Chromium is started with a new empty profile and its background traffic switched off (the
 * machine's closed network would otherwise stall it). axe-core checks each page's accessibility.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { chromiumPath } from "./chromium-path.ts";

export const CHROMIUM = chromiumPath();

/** Why the browser tests cannot run here, or undefined when they can. */
export const browserMissing = (): string | undefined =>
  existsSync(CHROMIUM)
    ? undefined
    : `no Chromium at ${CHROMIUM}: install Debian's chromium-headless-shell package (npm test does so when run as root) or set CHROMIUM_PATH`;

export interface BrowserHandle {
  browser: Browser;
  /**
   * A fresh context (own cookies) with a page at the given width, open until `closeTestPages`
   * (a test's page, the default) or until the browser closes (`"file"`: one a before() hook opens
   * for every test).
   */
  newPage(width?: number, lifetime?: "test" | "file"): Promise<{ context: BrowserContext; page: Page }>;
  /**
   * Closes the test pages opened so far; the browser files call it after each test. A page left
   * open keeps costing Chromium CPU while the file's later tests run: ten idle pages 1.9 ms a
   * second, ten whose form field has the focus (a blinking caret is drawn twice a second) 9 ms a
   * second (docs/benchmarks.md, "Issue 31 §5, 2026-11-30 (evening)").
   */
  closeTestPages(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The features Playwright's own `--disable-features` switches off (playwright-core's
 * chromiumSwitches.ts). Chromium keeps only the last value of a switch, so the one below replaces
 * Playwright's and repeats them; test/browser-launch.test.ts fails when Playwright's list has one
 * that is missing here.
 */
export const PLAYWRIGHT_DISABLED_FEATURES = [
  "AvoidUnnecessaryBeforeUnloadCheckSync",
  "DestroyProfileOnBrowserClose",
  "HttpsUpgrades",
  "HttpsFirstBalancedModeAutoEnable",
  "LensOverlay",
  "MediaRouter",
  "PaintHolding",
  "ThirdPartyStoragePartitioning",
  "AvoidCorsURLLoaderRestartOnRedirect",
  "TcpPortRandomizationWin",
  "OptimizationHints",
  "NetworkTimeServiceQuerying",
  "AimEnabled",
  "PreconnectToSearch",
  "msForceBrowserSignIn",
  "msEdgeUpdateLaunchServicesPreferredVersion",
];

/**
 * Chromium 156 renders the address bar's suggestion popups as WebUI pages (chrome://omnibox-popup
 * .top-chrome/), built for every window, headless too: each new context cost about 2.1 s of CPU in a
 * renderer nobody looks at (3 contexts: 8.7 s of Chromium's CPU with them, 2.2 s without;
 * docs/benchmarks.md, "Where the suite's CPU goes").
 */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
  `--disable-features=${[...PLAYWRIGHT_DISABLED_FEATURES, "WebUIOmniboxPopup", "WebUIOmniboxAimPopup"].join(",")}`,
];

/** `executablePath`: another Chromium than the tests' (browser-launch.test.ts checks the full one). */
export async function launchBrowser(executablePath = CHROMIUM): Promise<BrowserHandle> {
  // Playwright gives every launch a new empty profile directory of its own and removes it on close.
  const browser = await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
  const testContexts = new Set<BrowserContext>();
  return {
    browser,
    async newPage(width = 1280, lifetime = "test") {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      if (lifetime === "test") testContexts.add(context);
      return { context, page: await context.newPage() };
    },
    async closeTestPages() {
      const open = [...testContexts];
      testContexts.clear();
      await Promise.all(open.map((context) => context.close()));
    },
    close: () => browser.close(),
  };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core run inside the page; the serious and critical violations (WCAG 2 A/AA rules). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  return (await axeViolations(page)).filter((v) => v.impact === "serious" || v.impact === "critical");
}

/**
 * Fails with each violation's rule, help and elements: the serious and critical ones, or with
 * `every` all of them. `where` names the page in the message (default: its URL).
 */
export async function assertAccessible(page: Page, o: { every?: boolean; where?: string } = {}) {
  const violations = o.every ? await axeViolations(page) : await seriousViolations(page);
  assert.deepEqual(
    violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`),
    [],
    `axe on ${o.where ?? page.url()}`,
  );
}

/**
 * axe-core run inside the page: every violation of the WCAG 2 A/AA and best-practice rules. Only
 * the violations' fields read here leave the page: axe's whole result (every rule that passed or did
 * not apply, each with its elements' HTML) was 276 kB for a page of 60 table rows, and carrying it
 * through Chromium's browser process to the test was a third of what a check cost Chromium
 * (docs/benchmarks.md, "Issue 31 §5, 2026-11-30 (day)").
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  // resultTypes: axe still reports every element of each violation, and only one of each rule that
  // passed or did not apply, which nothing here reads (a check cost Chromium about 15% less).
  const options = {
    runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21aa", "best-practice"] },
    resultTypes: ["violations"],
  };
  // A string, so the test's own TypeScript needs no DOM types: it runs in the page.
  return (await page.evaluate(
    `axe.run(document, ${JSON.stringify(options)}).then((r) => r.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })),
    })))`,
  )) as AxeViolation[];
}

/**
 * Waits for the page a form lands on after it was submitted twice (a double click): the browser
 * aborts the first submission's navigation when the second starts, and Playwright's waitForURL
 * fails on that aborted navigation when it was already listening, so an abort is waited through.
 */
export async function waitForUrlAfterDoubleSubmit(page: Page, url: RegExp): Promise<void> {
  for (let aborts = 0; ; aborts++) {
    try {
      await page.waitForURL(url);
      return;
    } catch (err) {
      if (aborts >= 2 || !(err instanceof Error) || !err.message.includes("net::ERR_ABORTED")) throw err;
    }
  }
}
