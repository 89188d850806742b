/**
 * The portal's page-action table (services/gateway/src/pages/customer/page-table.ts), walked: every
 * write operation of the API has a page action or a written reason; every action's need is the
 * API route's own; each action refuses what the API's schema refuses, in the API's words; every
 * action that writes through the API takes a one-time token and acts once for it; and every control
 * a page draws for a role (owner, view-only member, suspended account) is one the role may use.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { before, describe, it } from "node:test";
import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { holdsAny, type Permission, resolveError } from "@hb/platform";
import "../services/gateway/src/pages/portal.ts";
import {
  actionNeed,
  apiRouteOf,
  type PageAction,
  pageActions,
} from "../services/gateway/src/pages/customer/page-table.ts";
import { needOf, type RouteDef } from "../services/gateway/src/route.ts";
import { allRoutes } from "../services/gateway/src/routes/index.ts";
import { parseInput } from "../services/gateway/src/validation.ts";
import {
  type Account,
  addCredit,
  amountOf,
  api,
  auth,
  billing,
  GATEWAY,
  newMachine,
  newProduct,
} from "./helpers.ts";
import { csrfIn, planAndBigger, portalMember, portalOwner, signInVisitor } from "./portal-pages.ts";

const onceIn = (html: string) => /name="_once" value="([^"]+)"/.exec(html)?.[1] ?? "";
const textOf = (s: string) =>
  s
    .replaceAll("&#39;", "'")
    .replaceAll("&quot;", '"')
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&");

/** API writes the portal does not offer, each with why. */
const NO_PAGE_ACTION: { route: RegExp; why: string }[] = [
  {
    route: /^(PUT \/reseller\/account\/webhook|POST \/reseller\/webhooks\/test)$/,
    why: "the owner's Reseller page sets the webhook URL and queues a test event through the webhooks service's own calls (pages/reseller.ts)",
  },
];

const key = (r: { method: string; path: string }) => `${r.method.toUpperCase()} ${r.path}`;
const keyed = (r: RouteDef): r is RouteDef & { auth: Exclude<RouteDef["auth"], "none"> } =>
  typeof r.auth === "object";

describe("the portal's page table", () => {
  const actions = pageActions();

  it("every write operation of the API has a page action that performs it, or a written reason", () => {
    const performed = new Set(actions.flatMap((a) => a.ops.map(key)));
    const writes = allRoutes("http://127.0.0.1").filter(
      (r) => keyed(r) && !r.hidden && !r.aliasOf && r.method !== "get",
    );
    const missing = writes
      .map(key)
      .filter((k) => !performed.has(k) && !NO_PAGE_ACTION.some((x) => x.route.test(k)));
    assert.deepEqual(missing, [], "API writes with no page action");
    for (const x of NO_PAGE_ACTION)
      assert.ok(
        writes.map(key).some((k) => x.route.test(k)),
        `${x.route}: ${x.why}`,
      );
  });

  it("an action's need is its API route's, the same for each operation it performs; one without says why", () => {
    assert.ok(actions.length >= 25, `the table holds the portal's actions (${actions.length})`);
    for (const a of actions) {
      if (a.ops.length === 0) {
        assert.ok(a.own?.why, `${a.path} performs no API operation and says why`);
        continue;
      }
      const needs = a.ops.map((op) => {
        const def = apiRouteOf(op);
        assert.ok(keyed(def));
        const n = needOf(def);
        return { permissions: [...n.permissions].sort(), write: n.write };
      });
      for (const n of needs) assert.deepEqual(n, needs[0], `${a.path}: its operations need the same`);
      const declared = actionNeed(a);
      assert.deepEqual([...declared.permissions].sort(), needs[0].permissions, a.path);
      assert.equal(declared.write, needs[0].write, a.path);
      assert.equal(declared.body, apiRouteOf(a.ops[0]).body, `${a.path}: the API's own schema`);
      assert.equal(declared.cooldown, apiRouteOf(a.ops[0]).cooldown?.rule, `${a.path}: the API's cool-down`);
    }
  });

  it("every action that writes through the API takes a one-time token", () => {
    for (const a of actions) if (a.ops.length) assert.equal(a.form, "once", a.path);
  });
});

/** The role's truth by the API's route table alone: the permission the route needs, no writes suspended. */
function apiAllows(role: { permissions: readonly string[]; suspended: boolean }, a: PageAction): boolean {
  if (a.ops.length === 0) {
    const own = a.own!;
    return !own.ownerOnly && holdsAny(role.permissions, own.permissions) && !(own.write && role.suspended);
  }
  const def = apiRouteOf(a.ops[0]);
  assert.ok(keyed(def));
  const n = needOf(def);
  return holdsAny(role.permissions, n.permissions) && !(n.write && role.suspended);
}

/** The declared action a drawn form (or a link to an action's question) belongs to. */
function actionOf(url: string): PageAction | undefined {
  const path = url.split("?")[0].replace(/^\/portal/, "");
  const asked = path.replace(/\/(power|game-power)\/[a-z]+$/, "/$1");
  return pageActions().find((a) => new RegExp(`^${a.path.replace(/:[A-Za-z]+/g, "[^/]+")}$`).test(asked));
}

/** The action controls a page draws: each form's action, and each link to an action's own question. */
function controlsIn(html: string): string[] {
  const forms = [...html.matchAll(/<form method="post" action="([^"]+)"/g)]
    .map((m) => m[1])
    .filter((u) => u !== "/portal/sign-out");
  const asks = [...html.matchAll(/<a [^>]*href="(\/portal\/[^"]+)"/g)]
    .map((m) => m[1])
    .filter((u) => /\/(revert|delete|restore|give-up|(game-)?power\/[a-z]+)$/.test(u));
  return [...forms, ...asks];
}

describe("the table at the HTTP edge", () => {
  type Visitor = Awaited<ReturnType<typeof signInVisitor>>;
  let acct: Account;
  let owner: Visitor;
  let vps: string;
  let game: string;
  let withAddon: string;
  let productId: string;
  let invoiceId: string;
  let proformaId: string;
  const VIEW_ONLY: Permission[] = ["view_services", "view_invoices", "view_billing"];

  before(async () => {
    const o = await portalOwner();
    const { secretKey, key } = await auth.createKey({
      personId: o.ownerId,
      label: "checks",
      scopes: ["services", "orders", "billing", "destructive"],
      ipAllowlist: "",
    });
    acct = { customerId: o.customerId, ownerId: o.ownerId, key: secretKey, keyId: key!.id };
    [vps, game] = await Promise.all([newMachine(acct, { kind: "vps" }), newMachine(acct, { kind: "game" })]);
    await addCredit(acct, "100.0000");
    const { product } = await planAndBigger();
    productId = product.id;
    await billing.adminAddProductOption({
      productId: product.id,
      name: "Extra IP",
      recurringMonthlyPrice: amountOf("2.5000"),
    });
    const { service } = await billing.adminCreateService({
      customerId: acct.customerId,
      productId: product.id,
      kind: ProductKind.VPS,
      status: ServiceStatus.ACTIVE,
    });
    withAddon = service!.id;
    owner = await signInVisitor(GATEWAY, "portal", o.email);
    // An unpaid invoice (a renewal) and an unpaid proforma (an order the credit does not cover).
    invoiceId = (await api("POST", `/api/v1/services/${withAddon}/renew`, { key: acct.key })).body.data
      .invoice.id;
    const pricey = await newProduct("vps", { monthly: "500.0000" });
    const placed = await api("POST", "/api/v1/orders", {
      key: acct.key,
      body: { productId: pricey.id, billingCycle: "monthly" },
    });
    assert.equal(placed.status, 201, JSON.stringify(placed.body));
    proformaId = (await api("GET", "/api/v1/proformas?status=unpaid", { key: acct.key })).body.data
      .proformas[0].id;
  });

  /** Posts a page's form (its CSRF and one-time token) with these fields; follows a redirect. */
  async function send(v: Visitor, formPage: string, to: string, fields: Record<string, string>) {
    const shown = await v.get(formPage);
    const r = await v.post(to, {
      _csrf: csrfIn(shown.text),
      _once: onceIn(shown.text) || randomUUID(),
      ...fields,
    });
    return r.status === 303 ? { first: r.status, ...(await v.get(r.location)) } : { first: r.status, ...r };
  }

  /** The API's own words for this input: the first violation its schema reports, as the API reports it. */
  function apiSays(a: PageAction, input: unknown, where: "body" | "path" = "body"): string {
    const def = apiRouteOf(a.ops[0]);
    const schema = where === "body" ? def.body : def.params;
    assert.ok(schema, `${a.path} has a ${where} schema`);
    try {
      parseInput(schema, input, where);
    } catch (err) {
      const v = resolveError(err).info?.violations[0];
      assert.ok(v);
      return v.message;
    }
    throw new Error(`the API's schema accepts the probe of ${a.path}`);
  }

  it("each action with an API schema refuses what the schema refuses, with the API's words on the page", async () => {
    const s = (id: string, rest = "") => `/portal/services/${id}${rest}`;
    const probes: Record<
      string,
      { page: string; to: string; form: Record<string, string>; api: unknown; where?: "path" }
    > = {
      "/services/:id/power": {
        page: s(vps),
        to: s(vps, "/power"),
        form: { action: "explode" },
        api: { id: vps, action: "explode" },
        where: "path",
      },
      "/services/:id/game-power": {
        page: s(game),
        to: s(game, "/game-power"),
        form: { action: "explode" },
        api: { id: game, action: "explode" },
        where: "path",
      },
      "/services/:id/reinstall": {
        page: s(vps, "/reinstall"),
        to: s(vps, "/reinstall"),
        form: { confirm: "yes", image: "debian-12", password: "short" },
        api: { image_id: "debian-12", password: "short" },
      },
      "/services/:id/password": {
        page: s(vps, "/password"),
        to: s(vps, "/password"),
        form: { password: "short" },
        api: { password: "short" },
      },
      "/services/:id/snapshots": {
        page: s(vps, "/copies"),
        to: s(vps, "/snapshots"),
        form: { name: "n".repeat(101) },
        api: { name: "n".repeat(101) },
      },
      "/services/:id/backups": {
        page: s(vps, "/copies"),
        to: s(vps, "/backups"),
        form: { name: "n".repeat(101) },
        api: { name: "n".repeat(101) },
      },
      "/services/:id/cancel": {
        page: s(vps, "/cancel"),
        to: s(vps, "/cancel"),
        form: { when: "now", reason: "r".repeat(1001) },
        api: { reason: "r".repeat(1001), immediate: true },
      },
      "/services/:id/addons": {
        page: s(withAddon, "/addons"),
        to: s(withAddon, "/addons"),
        form: { optionId: "not-an-id", billingType: "recurring", quantity: "1" },
        api: { optionId: "not-an-id", billingType: "recurring", quantity: 1 },
      },
      "/services/:id/upgrades": {
        page: s(withAddon, "/upgrades"),
        to: s(withAddon, "/upgrades"),
        form: { toProductId: "not-an-id" },
        api: { toProductId: "not-an-id" },
      },
      "/services/:id/upgrades/options": {
        page: s(withAddon, "/upgrades"),
        to: s(withAddon, "/upgrades/options"),
        form: { addOptions: "not-an-id" },
        api: { addOptions: ["not-an-id"], removeOptions: [] },
      },
      "/invoices/:id/pay": {
        page: `/portal/invoices/${invoiceId}`,
        to: `/portal/invoices/${invoiceId}/pay`,
        form: { amount: "abc" },
        api: { amount: "abc" },
      },
      "/proformas/:id/pay": {
        page: `/portal/proformas/${proformaId}`,
        to: `/portal/proformas/${proformaId}/pay`,
        form: { amount: "abc" },
        api: { amount: "abc" },
      },
      "/order/:productId": {
        page: `/portal/order/${productId}`,
        to: `/portal/order/${productId}`,
        form: { billingCycle: "fortnightly", quantity: "1" },
        api: { productId, billingCycle: "fortnightly" },
      },
      "/ssh-keys": {
        page: "/portal/ssh-keys",
        to: "/portal/ssh-keys",
        form: { name: "", publicKey: "ssh-ed25519 AAAA" },
        api: { name: "", publicKey: "ssh-ed25519 AAAA" },
      },
    };
    /** Actions with a schema but no probe, each with why. */
    const noProbe: Record<string, string> = {
      "/reseller/orders":
        "the table's owner is no partner, so the route refuses before its schema; test/portal-reseller.test.ts probes it as a partner",
      "/reseller/services/:serviceId/suspend": "as /reseller/orders (test/portal-reseller.test.ts)",
      "/reseller/services/:serviceId/unsuspend": "as /reseller/orders (test/portal-reseller.test.ts)",
      "/reseller/services/:serviceId/terminate": "as /reseller/orders (test/portal-reseller.test.ts)",
      "/cart/order":
        "its body is built from the cart's lines, each checked with the API's item schema when added (test/portal-cart.test.ts)",
      "/services/:id/action":
        "its body is the API's optional `params` record, which the form does not send; the action is the button's own name",
    };
    for (const a of pageActions()) {
      const need = a.ops.length ? actionNeed(a) : undefined;
      const pathChecked = a.ops.length && apiRouteOf(a.ops[0]).params && probes[a.path]?.where === "path";
      if (!need?.body && !pathChecked) continue;
      if (noProbe[a.path]) continue;
      const p = probes[a.path];
      assert.ok(p, `${a.path} validates with the API's schema: give it a probe or a reason`);
      const said = apiSays(a, p.api, p.where);
      const r = await send(owner, p.page, p.to, p.form);
      assert.ok(r.first === 400 || r.first === 303, `${a.path} answered ${r.first}`);
      if (r.first === 303) assert.match(r.text, /role="alert"/, `${a.path}: the refusal is on the page`);
      assert.ok(textOf(r.text).includes(said), `${a.path}: the page says the API's "${said}"`);
    }
  });

  it("every action refuses a form without its one-time token, and a token used twice acts once", async () => {
    for (const a of pageActions().filter((x) => x.form === "once")) {
      const to = `/portal${a.path.replace(/:id/g, vps).replace(/:[A-Za-z]+/g, randomUUID())}`;
      const shown = await owner.get("/portal/services");
      const r = await owner.post(to, { _csrf: csrfIn(shown.text) });
      assert.equal(r.status, 400, `${a.path} without a token`);
      assert.match(r.text, /This form has expired/, a.path);
    }
    // One token, two submissions (a double click): one backup and one SSH key.
    const copies = await owner.get(`/portal/services/${vps}/copies`);
    const form = { _csrf: csrfIn(copies.text), _once: onceIn(copies.text), name: "once-only" };
    const [b1, b2] = await Promise.all([
      owner.post(`/portal/services/${vps}/backups`, form),
      owner.post(`/portal/services/${vps}/backups`, form),
    ]);
    assert.equal(b1.location, b2.location);
    const backups = await api("GET", `/api/v1/services/${vps}/backups`, { key: acct.key });
    assert.equal(
      backups.body.data.backups.filter((b: { name: string }) => b.name === "once-only").length,
      1,
      "one backup for one token",
    );
  });

  it("every control a page draws for a role is one the role may use; a view-only member and a suspended account are drawn none", async () => {
    const member = await portalMember(acct.customerId, VIEW_ONLY);
    const viewer = await signInVisitor(GATEWAY, "portal", member.email);
    const pages = [
      "/portal/services",
      `/portal/services/${vps}`,
      `/portal/services/${vps}/copies`,
      `/portal/services/${vps}/reinstall`,
      `/portal/services/${vps}/password`,
      `/portal/services/${vps}/cancel`,
      `/portal/services/${game}`,
      `/portal/services/${withAddon}/addons`,
      `/portal/services/${withAddon}/upgrades`,
      "/portal/order",
      `/portal/order/${productId}`,
      "/portal/orders",
      "/portal/invoices",
      "/portal/proformas",
      "/portal/balance",
      "/portal/ssh-keys",
      "/portal/jobs",
    ];
    const drawn = async (v: Visitor) => {
      const seen: { page: string; url: string }[] = [];
      for (const p of pages) {
        const r = await v.get(p);
        assert.ok(r.status < 500, p);
        for (const url of controlsIn(r.text)) seen.push({ page: p, url });
      }
      return seen;
    };
    const check = (
      role: { permissions: readonly string[]; suspended: boolean },
      seen: { page: string; url: string }[],
    ) => {
      for (const c of seen) {
        const a = actionOf(c.url);
        assert.ok(a, `${c.page} draws ${c.url}, which is no declared page action`);
        assert.ok(apiAllows(role, a), `${c.page} draws ${c.url} for a role the API refuses`);
      }
    };
    const ownerSeen = await drawn(owner);
    check(
      {
        permissions: ["manage_services", "power_services", "cancel_services", "pay_invoices"],
        suspended: false,
      },
      ownerSeen,
    );
    // The owner is drawn the controls (the check above is not vacuous).
    for (const expected of [
      "/power",
      "/renew",
      "/snapshots",
      "/backups",
      "/reinstall",
      "/cancel",
      "/upgrades",
      "/ssh-keys",
      "/order/",
    ])
      assert.ok(
        ownerSeen.some((c) => c.url.includes(expected)),
        `the owner is drawn ${expected}`,
      );

    const viewerSeen = await drawn(viewer);
    check({ permissions: VIEW_ONLY, suspended: false }, viewerSeen);
    assert.deepEqual(viewerSeen, [], "a view-only member is drawn no action");
    const menu =
      /<nav aria-label="Main">(.*?)<\/nav>/s.exec((await viewer.get("/portal/services")).text)?.[1] ?? "";
    assert.doesNotMatch(menu, />Order<|>Team</, "nor Order or Team in the menu");
    const tabs =
      /<nav aria-label="Service"[^>]*>(.*?)<\/nav>/s.exec(
        (await viewer.get(`/portal/services/${vps}`)).text,
      )?.[1] ?? "";
    assert.doesNotMatch(tabs, />Reinstall<|>Root password<|>Cancel</);

    await auth.setCustomerStatus({ customerId: acct.customerId, status: CustomerStatus.SUSPENDED });
    try {
      const suspendedSeen = await drawn(owner);
      assert.deepEqual(suspendedSeen, [], "a suspended account is drawn no write control");
      for (const p of pages) {
        const r = await owner.get(p);
        assert.match(
          r.text,
          /id="account-banner">.*This account is suspended/s,
          `${p} says the account is suspended`,
        );
      }
    } finally {
      await auth.setCustomerStatus({ customerId: acct.customerId, status: CustomerStatus.ACTIVE });
    }
  });

  it("destructive power asks first naming the machine, and power follows the machine's state", async () => {
    const hostOf = async (id: string) =>
      (await api("GET", `/api/v1/services/${id}`, { key: acct.key })).body.data as {
        hostname: string;
        name: string;
      };
    const running = await owner.get(`/portal/services/${vps}`);
    assert.doesNotMatch(running.text, /name="action" value="start"/, "no start on a running machine");
    assert.match(running.text, /name="action" value="reboot"/);
    for (const act of ["stop", "poweroff"]) {
      assert.match(
        running.text,
        new RegExp(`href="/portal/services/${vps}/power/${act}"`),
        `${act} is a question`,
      );
      assert.doesNotMatch(
        running.text,
        new RegExp(`name="action" value="${act}"`),
        `${act} is not one click`,
      );
      const q = await owner.get(`/portal/services/${vps}/power/${act}`);
      const h = await hostOf(vps);
      assert.match(textOf(q.text), new RegExp(`Yes, ${act} ${h.hostname || h.name}`));
      assert.match(q.text, new RegExp(`name="action" value="${act}"`));
    }
    const stopped = await newMachine(acct, { kind: "vps", state: "stopped" });
    const st = await owner.get(`/portal/services/${stopped}`);
    assert.match(st.text, /name="action" value="start"/);
    assert.doesNotMatch(
      st.text,
      /value="reboot"|power\/stop|power\/poweroff/,
      "a stopped machine only starts",
    );
    for (const status of [ServiceStatus.PROVISIONING_FAILED, ServiceStatus.TERMINATED]) {
      const product = await newProduct("vps");
      const { service } = await billing.adminCreateService({
        customerId: acct.customerId,
        productId: product.id,
        kind: ProductKind.VPS,
        status,
      });
      const shown = await owner.get(`/portal/services/${service!.id}`);
      assert.equal(shown.status, 200);
      assert.doesNotMatch(
        shown.text,
        /name="action"|\/power\/[a-z]+"/,
        `no power on a ${ServiceStatus[status]} service`,
      );
      assert.match(shown.text, /it takes no power actions/);
    }
    const g = await owner.get(`/portal/services/${game}`);
    assert.match(g.text, new RegExp(`href="/portal/services/${game}/game-power/kill"`), "kill is a question");
    const kill = await owner.get(`/portal/services/${game}/game-power/kill`);
    assert.match(kill.text, /Yes, kill/);
  });

  it("a dedicated server's Root password says it starts a reinstall and asks to confirm", async () => {
    const dedicated = await newMachine(acct, { kind: "dedicated" });
    const p = await owner.get(`/portal/services/${dedicated}/password`);
    assert.equal(p.status, 200);
    assert.match(p.text, /starts a reinstall job/);
    const r = await send(
      owner,
      `/portal/services/${dedicated}/password`,
      `/portal/services/${dedicated}/password`,
      {
        password: "a-long-new-password",
      },
    );
    assert.equal(r.first, 400, "unconfirmed, nothing is sent");
    assert.match(r.text, /id="f-confirm-error"/);
    const jobs = await api("GET", `/api/v1/jobs?resource=${dedicated}`, { key: acct.key });
    assert.equal(jobs.body.data.jobs.length, 0);
  });

  it("add-ons: the billing cycle is chosen on the form and sent as chosen, with no default of the page's; the options upgrade can add", async () => {
    const path = `/portal/services/${withAddon}/addons`;
    const addons = await owner.get(path);
    assert.match(addons.text, /name="billingCycle"/);
    const optionId = /<option value="([0-9a-f-]{36})">Extra IP<\/option>/.exec(addons.text)?.[1] ?? "";
    // The chosen cycle reaches the API, which answers in its own words.
    const cycle = await send(owner, path, path, {
      optionId,
      billingType: "recurring",
      billingCycle: "fortnightly",
    });
    assert.match(textOf(cycle.text), /unknown billingCycle "fortnightly"/);
    // A form without the billing type is the API's to refuse: the page assumes none.
    const typeless = await send(owner, path, path, { optionId, quantity: "1" });
    assert.match(textOf(typeless.text), /Invalid input: billingType: must be /);
    const held = await api("GET", `/api/v1/services/${withAddon}/options`, { key: acct.key });
    assert.equal(held.body.data.options.length, 0, "nothing bought");
    const up = await owner.get(`/portal/services/${withAddon}/upgrades`);
    const toAdd = /name="addOptions" value="([0-9a-f-]{36})"/.exec(up.text)?.[1];
    assert.equal(toAdd, optionId, "the upgrade page offers to add the add-on");
    const r = await send(
      owner,
      `/portal/services/${withAddon}/upgrades`,
      `/portal/services/${withAddon}/upgrades/options`,
      { addOptions: optionId },
    );
    assert.equal(r.first, 303);
    assert.match(r.text, /The upgrade is requested/);
    const list = await api("GET", `/api/v1/services/${withAddon}/upgrades`, { key: acct.key });
    assert.ok(list.body.data.pending_upgrade, "the API holds the options upgrade");
  });

  it("card payment unavailable is said where the card option would be", async () => {
    const page = await owner.get("/portal/add-credit");
    assert.equal(page.status, 200);
    if (!/Continue to card payment/.test(page.text)) assert.match(page.text, /id="card-unavailable"/);
    const balance = await owner.get("/portal/balance");
    assert.doesNotMatch(balance.text, /by card or bank transfer/);
  });
});
