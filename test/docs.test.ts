import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { gunzipSync } from "node:zlib";
import type { Browser, Page } from "playwright-core";
import { browserMissing, launchBrowser } from "./support/browser.ts";

// Only the gateway is needed, so this file runs against any running gateway as well as npm test's.
const GATEWAY = process.env.GATEWAY_URL ?? "http://127.0.0.1:8080";
/** When set, the browser tests also save screenshots of the reference into this folder. */
const SCREENSHOTS = process.env.DOCS_SCREENSHOTS;

const ASSET_NAME = /^\/api\/v1\/docs\/assets\/(scalar-\d+\.\d+\.\d+-([0-9a-f]{12})\.js)$/;

/** A GET whose body is not decoded, to see the bytes and encoding the gateway sends. */
function rawGet(url: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>(
    (resolve, reject) => {
      http
        .get(url, { headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
          );
          res.on("error", reject);
        })
        .on("error", reject);
    },
  );
}

async function scriptUrl(): Promise<string> {
  const html = await (await fetch(`${GATEWAY}/api/v1/docs`)).text();
  const src = html.match(/<script src="([^"]+)"><\/script>/)?.[1];
  assert.ok(src, "the page loads a script");
  return src;
}

describe("GET /api/v1/docs", () => {
  it("answers HTML without a key, with a policy that lets the page reach only the gateway", async () => {
    const res = await fetch(`${GATEWAY}/api/v1/docs`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
    const csp = res.headers.get("content-security-policy") ?? "";
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /connect-src 'self'(;|$)/);
    assert.match(csp, /script-src 'self' 'sha256-[A-Za-z0-9+/]+=*'(;|$)/);
    assert.doesNotMatch(csp, /https?:|\*/, "no other host is allowed");
    const html = await res.text();
    assert.doesNotMatch(html, /(src|href)="(https?:)?\/\//, "nothing is loaded from another host");
    assert.match(await scriptUrl(), ASSET_NAME);
  });

  it("links the OpenAPI document, the guide and the plain reference for browsers without JavaScript", async () => {
    const html = await (await fetch(`${GATEWAY}/api/v1/docs`)).text();
    const noscript = html.match(/<noscript>([\s\S]*?)<\/noscript>/)?.[1] ?? "";
    assert.match(noscript, /href="\/api\/v1\/openapi.json"/);
    assert.match(noscript, /href="\/api\/v1\/guide.md"/);
    assert.match(noscript, /href="\/api\/v1\/docs\/plain"/);
  });
});

describe("GET /api/v1/docs/assets/:file", () => {
  it("serves the renderer named by its content, cacheable for a year, gzip-compressed when asked", async () => {
    const src = await scriptUrl();
    const hash = src.match(ASSET_NAME)?.[2];
    const gz = await rawGet(GATEWAY + src, { "accept-encoding": "gzip, deflate, br" });
    assert.equal(gz.status, 200);
    assert.equal(gz.headers["content-encoding"], "gzip");
    assert.match(gz.headers["content-type"] ?? "", /^text\/javascript/);
    assert.match(gz.headers["cache-control"] ?? "", /max-age=31536000/);
    assert.match(gz.headers["cache-control"] ?? "", /immutable/);
    assert.match(String(gz.headers.vary), /Accept-Encoding/i);
    const js = gunzipSync(gz.body);
    assert.equal(createHash("sha256").update(js).digest("hex").slice(0, 12), hash, "the name is its content");
    assert.ok(gz.body.length < js.length / 2, `compressed ${gz.body.length} of ${js.length} bytes`);

    const plain = await rawGet(GATEWAY + src);
    assert.equal(plain.headers["content-encoding"], undefined);
    assert.deepEqual(plain.body, js);
  });

  it("answers 404 NOT_FOUND in the envelope for any other name", async () => {
    const res = await fetch(`${GATEWAY}/api/v1/docs/assets/scalar-0.0.1-000000000000.js`);
    assert.equal(res.status, 404);
    const body = (await res.json()) as { success: boolean; code: string };
    assert.equal(body.success, false);
    assert.equal(body.code, "NOT_FOUND");
  });
});

describe("GET /api/v1/docs/plain", () => {
  it("renders the reference as plain HTML without scripts", async () => {
    const res = await fetch(`${GATEWAY}/api/v1/docs/plain`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
    const html = await res.text();
    assert.match(html, /<code>\/api\/v1\/vps<\/code>/);
    assert.doesNotMatch(html, /<script|<link[^>]+href="https?:/);
  });
});

describe("the reseller section of the reference", () => {
  it("explains the request signature, and each reseller operation asks for its two headers", async () => {
    const doc = (await (await fetch(`${GATEWAY}/api/v1/openapi.json`)).json()) as {
      tags: { name: string; description?: string }[];
      paths: Record<string, Record<string, { tags: string[]; parameters?: { name: string; in: string }[] }>>;
    };
    const reseller = doc.tags.find((t) => t.name === "Reseller");
    assert.match(reseller?.description ?? "", /X-Reseller-Timestamp/);
    assert.match(reseller?.description ?? "", /X-Reseller-Signature/);
    assert.match(reseller?.description ?? "", /hmac-sha256=/);
    assert.match(reseller?.description ?? "", /<timestamp>\.<raw body>/);
    const ops = Object.values(doc.paths)
      .flatMap((byMethod) => Object.values(byMethod))
      .filter((op) => op.tags.includes("Reseller"));
    assert.ok(ops.length > 0);
    for (const op of ops) {
      const headers = (op.parameters ?? []).filter((p) => p.in === "header").map((p) => p.name);
      // The order route also reads an Idempotency-Key; the signature headers are on every one.
      assert.deepEqual(
        headers.filter((h) => h !== "Idempotency-Key"),
        ["X-Reseller-Timestamp", "X-Reseller-Signature"],
      );
    }
  });
});

const noChromium = browserMissing() ?? false;

describe("the reference in a browser", { skip: noChromium }, () => {
  let browser: Browser;
  let page: Page;
  const requested: string[] = [];
  const problems: string[] = [];

  const sidebar = () => page.locator('aside[aria-label^="Sidebar"]');
  /** The sidebar link of one operation: its path, with the method beside it. */
  const navEntry = (method: string, opPath: string) =>
    sidebar().getByRole("link", { name: `${opPath} HTTP Method: ${method}`, exact: true });
  const shoot = async (name: string) => {
    if (!SCREENSHOTS) return;
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, name) });
  };

  before(async () => {
    browser = (await launchBrowser()).browser;
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    // The reference is one large script; with the portal's browser tests and the services sharing
    // two cores, its "load" has taken over 30 s in CI. The waits below are deadlines, not sleeps.
    page.setDefaultNavigationTimeout(120_000);
    page.setDefaultTimeout(60_000);
    page.on("request", (r) => requested.push(r.url()));
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error" && /Content Security Policy|Refused to/i.test(m.text()))
        problems.push(m.text());
    });
    await page.goto(`${GATEWAY}/api/v1/docs`, { waitUntil: "domcontentloaded" });
    await sidebar().waitFor({ timeout: 90_000 });
  });

  after(async () => {
    await browser?.close();
  });

  it("lists the operations of every section in the navigation", async () => {
    await navEntry("GET", "/vps").waitFor();
    await navEntry("POST", "/orders").waitFor();
    await navEntry("PUT", "/reseller/account/webhook").waitFor();
    await shoot("reference-overview.png");
  });

  it("finds an operation by a word of its summary and goes to it", async () => {
    await sidebar()
      .getByRole("button", { name: /search/i })
      .click();
    await page.keyboard.type("reinstall");
    await page.getByRole("dialog").getByRole("option", { name: "Operation: /vps/{id}/reinstall" }).click();
    await page.waitForURL(/#.*\/POST\/vps\/\{id\}\/reinstall$/);
  });

  it("shows a curl sample for an operation, calling the gateway with the key", async () => {
    await navEntry("POST", "/orders").click();
    await page.waitForURL(/\/POST\/orders$/);
    const section = page.locator('section[id$="/POST/orders"]');
    const sample = section.locator("pre, code").filter({ hasText: /^\s*(1\s*)?curl/ });
    await sample.first().waitFor();
    const text = (await sample.first().textContent()) ?? "";
    assert.match(text, /\/api\/v1\/orders/);
    assert.match(text, /Authorization: Bearer/);
    await shoot("reference-operation.png");
  });

  it("shows the reseller section with its operations", async () => {
    await sidebar().getByRole("link", { name: "Reseller", exact: true }).click();
    await page.waitForURL(/#tag\/reseller$/);
    const section = page.locator('section[id$="/tag/reseller"]');
    await section.getByText("/reseller/orders/{orderId}/retry-payment").first().waitFor();
    await shoot("reference-reseller.png");
  });

  it("made every request to the gateway's own origin, and none was refused by the page's policy", () => {
    const origin = new URL(GATEWAY).origin;
    const elsewhere = requested.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith("data:"));
    assert.deepEqual(elsewhere, []);
    assert.ok(
      requested.some((u) => u === `${origin}/api/v1/openapi.json`),
      requested.join("\n"),
    );
    assert.deepEqual(problems, []);
  });
});
