/** Set-up for the page tests: customers, people and staff who can sign in, through auth's RPCs. */
import { PortalService, Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import type { Page } from "playwright-core";
import { newToken } from "../services/gateway/src/pages/customer/once.ts";
import { auth, billing, cyclePrices, GATEWAY, grpc, kindOf, newProduct, unique } from "./helpers.ts";

export const portal = grpc([PortalService], "AUTH_ADDR");
export const PASSWORD = "a-long-test-password";

export async function withPassword(realm: Realm, subjectId: string, password = PASSWORD) {
  const { token } = await portal.createPasswordLink({ realm, subjectId });
  await portal.setPassword({ token, password });
}

/** A customer whose owner can sign in to the portal. */
export async function portalOwner() {
  const email = `${unique("owner")}@example.test`;
  const { customer, owner } = await auth.createCustomer({ name: unique("Owner"), email, currency: "EUR" });
  await withPassword(Realm.PORTAL, owner!.id);
  return { customerId: customer!.id, customerName: customer!.name, ownerId: owner!.id, email };
}

/** A team member of the customer who can sign in to the portal. */
export async function portalMember(customerId: string, permissions: string[]) {
  const email = `${unique("member")}@example.test`;
  const { person } = await auth.createPerson({ customerId, name: unique("Member"), email, permissions });
  await withPassword(Realm.PORTAL, person!.id);
  return { personId: person!.id, email };
}

/** A staff member who can sign in to the admin panel. */
export async function staffMember(permissions: string[]) {
  const email = `${unique("staff")}@example.test`;
  const { staff } = await auth.createStaff({ name: unique("Staff"), email, permissions });
  await withPassword(Realm.ADMIN, staff!.id);
  return { staffId: staff!.id, email };
}

/** Signs in through the page's own form, as a person does. */
export async function signInWithForm(
  page: Page,
  area: "portal" | "admin",
  email: string,
  password = PASSWORD,
) {
  await page.goto(`${GATEWAY}/${area}/sign-in`);
  await page.getByLabel("E-mail address").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("button", { name: "Sign out" }).waitFor();
}

/**
 * Signs the page's browser context in and opens the page the form lands on. The form is posted
 * through the context's own request client (Playwright's, outside Chromium), whose cookies are the
 * browser's: the page tests sign in some fifty times, and the form in the browser cost Chromium
 * 0.84-1.05 CPU-s a time against 0.43-0.53 (docs/benchmarks.md, "Issue 31 §5, 2026-11-30 (day)").
 * signInWithForm drives the form itself.
 */
export async function signIn(page: Page, area: "portal" | "admin", email: string, password = PASSWORD) {
  const request = page.context().request;
  const form = await request.get(`${GATEWAY}/${area}/sign-in`);
  const r = await request.post(`${GATEWAY}/${area}/sign-in`, {
    form: { _csrf: csrfIn(await form.text()), email, password },
    maxRedirects: 0,
  });
  if (r.status() !== 303) throw new Error(`sign-in of ${email} answered ${r.status()}`);
  await page.goto(new URL(r.headers().location ?? "", GATEWAY).href);
  await page.getByRole("button", { name: "Sign out" }).waitFor();
}

/** True when nothing on the page is wider than the window (usable on a 390 px screen). */
export const fitsWidth = (page: Page) =>
  page.evaluate("document.documentElement.scrollWidth <= window.innerWidth") as Promise<boolean>;

/** A cookie jar and a form poster, as a browser without JavaScript would send them. */
export function visitor(base = GATEWAY) {
  const jar = new Map<string, string>();
  const setCookies: string[] = [];
  const remember = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      setCookies.push(c);
      const [pair] = c.split(";");
      const [name, value] = [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)];
      if (value) jar.set(name, value);
      else jar.delete(name);
    }
  };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  return {
    jar,
    setCookies,
    async get(path: string, headers: Record<string, string> = {}) {
      const res = await fetch(base + path, {
        headers: { cookie: cookie(), ...headers },
        redirect: "manual",
      });
      remember(res);
      return {
        status: res.status,
        location: res.headers.get("location") ?? "",
        text: await res.text(),
        headers: res.headers,
      };
    },
    async post(path: string, form: Record<string, string>) {
      // An admin write form carries a one-time token (admin-once.ts); a test that posts without
      // one posts a freshly loaded form, which has its own. Tests of the token pass it themselves.
      const once: Record<string, string> =
        ADMIN_WRITE.test(path) && form._once === undefined ? { _once: newToken() } : {};
      const res = await fetch(base + path, {
        method: "POST",
        headers: { cookie: cookie(), "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ ...form, ...once }),
        redirect: "manual",
      });
      remember(res);
      return {
        status: res.status,
        location: res.headers.get("location") ?? "",
        text: await res.text(),
        headers: res.headers,
      };
    },
  };
}

/** Admin paths whose POST is a write (sign-in and sign-out are not). */
const ADMIN_WRITE = /^\/admin\/(?!sign-in|sign-out|set-password)/;

/** The one-time token of the form posting to `action` on the page (admin-once.ts). */
export function onceIn(html: string, action: string): string {
  const at = html.indexOf(`action="${action}"`);
  return at < 0 ? "" : (/name="_once" value="([^"]+)"/.exec(html.slice(at))?.[1] ?? "");
}

export const csrfIn = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";

/** A visitor signed in to the area (asserts the sign-in succeeded). */
export async function signInVisitor(
  base: string,
  area: "portal" | "admin",
  email: string,
  password = PASSWORD,
) {
  const v = visitor(base);
  const form = await v.get(`/${area}/sign-in`);
  const r = await v.post(`/${area}/sign-in`, { _csrf: csrfIn(form.text), email, password });
  if (r.status !== 303) throw new Error(`sign-in of ${email} answered ${r.status}`);
  return v;
}

/** A monthly VPS plan at 10.00 EUR and its "XL" at 30.00 EUR, an upgrade path of the plan. */
export async function planAndBigger() {
  const product = await newProduct("vps", { monthly: "10.0000" });
  const { product: bigger } = await billing.adminCreateProduct({
    name: `${product.name} XL`,
    kind: kindOf("vps"),
    prices: cyclePrices({ monthly: "30.0000" }),
    currency: "EUR",
  });
  return { product, bigger: bigger! };
}
