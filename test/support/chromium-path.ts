/**
 * Which Chromium the page tests drive: Debian's, in its old headless mode (the
 * chromium-headless-shell package, which is what Playwright itself runs for headless tests) where
 * installed, else the full browser; CHROMIUM_PATH names another. The shell builds no browser window
 * around a page: a new context with its page and a navigation cost its browser process 97 ms and
 * its GPU process 39 against the full browser's 397 and 104 (docs/benchmarks.md, "Issue 31 §5,
 * 2026-11-30 (evening)"). Apart from test/support/browser.ts so that scripts/test.ts, which
 * installs one when neither is there, reads it without loading Playwright.
 */
import { existsSync } from "node:fs";

export const HEADLESS_SHELL = "/usr/bin/chromium-headless-shell";
export const FULL_CHROMIUM = "/usr/bin/chromium";

export const chromiumPath = (): string =>
  process.env.CHROMIUM_PATH || (existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : FULL_CHROMIUM);
