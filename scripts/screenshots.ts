/**
 * `npm run screenshots`: photographs the portal's and the admin panel's pages, filled with the demo
 * data, into docs/screenshots/ (shown in the README). Runs its own stack on free ports with its
 * own database, like npm test, and drives Debian's Chromium.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Locator } from "playwright-core";
import postgres from "postgres";
import { launchBrowser } from "../test/support/browser.ts";
import { seedDemo } from "./admin/seed.ts";
import { ensureDependencies } from "./deps.ts";
import { resellerShots } from "./screenshots-reseller.ts";
import { seedUsageHistory } from "./screenshots-usage.ts";
import { stackEnv, startStack } from "./stack.ts";

const out = path.join(import.meta.dirname, "..", "docs", "screenshots");
const deps = await ensureDependencies({
  DATABASE_URL: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  NATS_URL: process.env.NATS_URL ?? "nats://127.0.0.1:4222",
});
Object.assign(process.env, deps.urls);
const db = new URL(process.env.DATABASE_URL ?? "");
db.pathname = `/hb_shots_${Date.now().toString(36)}`;
const { env, gatewayPort } = await stackEnv({
  databaseUrl: db.toString(),
  ns: `shots${Date.now().toString(36)}`,
});
env.LOG_LEVEL = "warn";
// The pages show these addresses; the screenshots read as npm start's.
for (const [k, v] of Object.entries(env)) process.env[k] = v;
const stack = await startStack({ env, output: "pipe", gatewayPort });
const browser = await launchBrowser();
try {
  const demo = await seedDemo();
  await seedUsageHistory(db.toString());
  const base = stack.gatewayUrl;
  mkdirSync(out, { recursive: true });
  const login = (area: "portal" | "admin") => demo.signIns.find((s) => s.area === area)!;
  const as = async (email: string, password: string, area: "portal" | "admin", width: number) => {
    const { page } = await browser.newPage(width);
    await page.goto(`${base}/${area}/sign-in`);
    await page.getByLabel("E-mail address").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Sign out" }).waitFor();
    return page;
  };
  const shot = (page: Awaited<ReturnType<typeof as>>, name: string) =>
    page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });
  /** Waits for what the photo must show, with a deadline, then takes the page. */
  const shotWhen = async (page: Awaited<ReturnType<typeof as>>, name: string, ready: Locator) => {
    await ready.first().waitFor({ timeout: 30_000 });
    await shot(page, name);
  };

  const owner = await as(login("portal").email, login("portal").password, "portal", 390);
  await owner.goto(`${base}/portal/keys`);
  await owner.getByLabel("Label", { exact: true }).fill("deploy script");
  await owner.getByLabel("services").check();
  await owner.getByRole("button", { name: "Create key" }).click();
  const key = await owner.getByLabel("Full key").inputValue();
  await shot(owner, "portal-keys");
  for (const p of ["/api/v1/account", "/api/v1/services", "/api/v1/nope"]) {
    await fetch(base + p, { headers: { authorization: `Bearer ${key}` } });
  }
  // The log consumer stores the calls a moment later.
  for (let i = 0; i < 50; i++) {
    await owner.goto(`${base}/portal/keys`);
    await owner.getByRole("link", { name: "Request log of deploy script" }).click();
    if ((await owner.getByRole("cell", { name: "/api/v1/account" }).count()) > 0) break;
  }
  await shot(owner, "portal-key-log");
  const ownerWide = await as(login("portal").email, login("portal").password, "portal", 1280);
  await ownerWide.goto(`${base}/portal/team`);
  await shot(ownerWide, "portal-team");
  await resellerShots(ownerWide, base, shotWhen);
  // The customer's operations: services, one service, a reboot's job, ordering, money, SSH keys.
  await ownerWide.goto(`${base}/portal/services`);
  await shot(ownerWide, "portal-services");
  await ownerWide
    .getByRole("row", { name: /web-1\.demo/ })
    .getByRole("link")
    .first()
    .click();
  // The usage graphs show the last hour, the history seeded above; then the web console.
  const service = new URL(ownerWide.url()).pathname;
  await ownerWide.goto(`${base}${service}?range=1h`);
  await shot(ownerWide, "portal-service");
  for (const [page, name] of [
    [ownerWide, "portal-usage"],
    [owner, "portal-usage-390"],
  ] as const) {
    await page.goto(`${base}${service}?range=1h`);
    // A chart, not "No readings": the photo is wrong without the seeded history, so say so.
    await page.locator("#usage-history svg").first().waitFor({ timeout: 10_000 });
    const box = await page.locator("#usage-history").boundingBox();
    if (!box) throw new Error("the service page has no usage history section");
    // The section with the page's margin around it, as it reads on the page.
    const clip = { x: 0, y: Math.max(0, box.y - 16), width: box.x * 2 + box.width, height: box.height + 32 };
    await page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true, clip });
  }
  await ownerWide.goto(`${base}${service}/console`);
  await ownerWide.getByRole("button", { name: "Open the console" }).click();
  const terminal = ownerWide.locator("#console .xterm-rows");
  await terminal.getByText(/Simulated console/).waitFor({ timeout: 30_000 });
  await ownerWide.keyboard.type("uname -a");
  await ownerWide.keyboard.press("Enter");
  await shotWhen(ownerWide, "portal-console", terminal.getByText("echo: uname -a"));
  await ownerWide.goto(`${base}${service}`);
  await ownerWide.getByRole("button", { name: "reboot", exact: true }).click();
  await ownerWide.waitForURL(/\/portal\/jobs\//);
  await ownerWide
    .locator("[data-job-done]")
    .waitFor({ timeout: 30_000 })
    .catch(() => undefined);
  await shot(ownerWide, "portal-job");
  await ownerWide.goto(`${base}/portal/order`);
  await ownerWide
    .getByRole("link", { name: /^Order / })
    .first()
    .click();
  await shot(ownerWide, "portal-order");
  for (const [where, name] of [
    ["/portal/invoices", "portal-invoices"],
    ["/portal/balance", "portal-balance"],
    ["/portal/ssh-keys", "portal-ssh-keys"],
    ["/portal/jobs", "portal-jobs"],
  ]) {
    await ownerWide.goto(`${base}${where}`);
    await shot(ownerWide, name);
  }
  await ownerWide.goto(`${base}/portal/add-credit`);
  await shot(ownerWide, "portal-add-credit");
  await ownerWide.getByLabel("Amount (EUR)").last().fill("150");
  await ownerWide.getByRole("button", { name: "Get transfer details" }).click();
  await ownerWide.getByText("How to pay").waitFor();
  await shot(ownerWide, "portal-bank-transfer");
  await owner.goto(`${base}/portal/services`);
  await shot(owner, "portal-services-390");
  const member = demo.signIns.find((s) => s.email === "tess@example.com")!;
  const tess = await as(member.email, member.password, "portal", 390);
  await tess.goto(`${base}/portal/keys`);
  await shot(tess, "portal-member-keys");

  const admin = await as(login("admin").email, login("admin").password, "admin", 1280);
  await admin.goto(`${base}/admin/customers/${demo.customerId}`);
  await shot(admin, "admin-customer");
  for (const tab of ["people", "services", "documents", "balance", "keys", "audit"]) {
    await admin.goto(`${base}/admin/customers/${demo.customerId}/${tab}`);
    await shot(admin, `admin-customer-${tab}`);
  }
  await admin.goto(`${base}/admin/settings`);
  await shot(admin, "admin-settings");
  await admin.goto(`${base}/admin/customers`);
  await shot(admin, "admin-customers");
  await admin.goto(`${base}/admin/partners`);
  await shot(admin, "admin-partners");
  await admin.goto(`${base}/admin/bank-transfers`);
  await shot(admin, "admin-bank-transfers");
  const signIn = (await browser.newPage(390)).page;
  await signIn.goto(`${base}/portal/sign-in`);
  await shot(signIn, "portal-sign-in");
  process.stdout.write(`Screenshots written to ${out}\n`);
} finally {
  await browser.close();
  await stack.stop();
  const admin = new URL(db);
  admin.pathname = "/postgres";
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
  await sql.unsafe(`drop database if exists "${db.pathname.slice(1)}" with (force)`);
  await sql.end({ timeout: 5 });
  await deps.stop();
}
