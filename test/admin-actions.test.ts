/**
 * The admin panel's action table (issue 29 §1, services/gateway/src/pages/admin-actions.ts),
 * walked entry by entry at the edge staff see: every write is registered from the table and only
 * from it; each one's form carries a one-time token, so the same token sent twice acts once and
 * leaves one audit row; and every control drawn for a role is one the table allows that role
 * (view-only staff see no write control, no Settings input, no menu item that answers 403).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { StaffActionOutcome } from "@hb/contracts/hb/auth/v1/staff_audit_pb";
import type { Router } from "express";
import type { PageClients } from "../services/gateway/src/clients.ts";
import { adminRouter } from "../services/gateway/src/pages/admin.ts";
import {
  ADMIN_ACTIONS,
  ADMIN_PAGES,
  type AdminAction,
  type AdminActionName,
} from "../services/gateway/src/pages/admin-actions.ts";
import type { OnceStore } from "../services/gateway/src/pages/customer/once.ts";
import { auth, GATEWAY, newAccount, newMachine, newPartner, unique } from "./helpers.ts";
import { csrfIn, onceIn, portalOwner, signInVisitor, staffMember } from "./portal-pages.ts";

type Visitor = Awaited<ReturnType<typeof signInVisitor>>;
const NAMES = Object.keys(ADMIN_ACTIONS) as AdminActionName[];
const entry = (n: AdminActionName): AdminAction => ADMIN_ACTIONS[n];

/** The table's path as a pattern of the concrete paths it serves (":id" is one segment). */
const pattern = (a: AdminAction) => new RegExp(`^/admin${a.path.replace(/:[a-z]+/g, "[^/]+")}$`);
const actionOf = (path: string) => NAMES.find((n) => pattern(entry(n)).test(path));

/** One write of the table as a test performs it: the page that draws its form, and the form. */
interface Case {
  page: string;
  action: string;
  form: Record<string, string>;
  /** The customer its audit rows are filed under, known before or read from where it went. */
  customerId: string | ((location: string) => string);
}

/** A pending bank transfer of a customer of its own, asked for in the portal. */
async function pendingTransfer() {
  const o = await portalOwner();
  const v = await signInVisitor(GATEWAY, "portal", o.email);
  const page = await v.get("/portal/add-credit");
  const action = "/portal/add-credit/bank";
  const r = await v.post(action, {
    _csrf: csrfIn(page.text),
    _once: onceIn(page.text, action),
    "bank-amount": "40",
  });
  assert.equal(r.status, 303, r.text);
  const reference = /HB-[0-9A-Z]{4}-[0-9A-Z]{4}/.exec((await v.get(r.location)).text)?.[0];
  assert.ok(reference);
  return { customerId: o.customerId, reference };
}

/** The settings as the page shows them, so saving them changes nothing other tests see. */
async function settingsNow(v: Visitor, names: string[]) {
  const text = (await v.get("/admin/settings")).text;
  const out: Record<string, string> = {};
  for (const n of names) {
    const input = new RegExp(`<input[^>]*name="${n}"[^>]*>`).exec(text)?.[0] ?? "";
    if (/type="checkbox"/.test(input)) {
      if (/ checked/.test(input)) out[n] = "on";
    } else out[n] = /value="([^"]*)"/.exec(input)?.[1] ?? "";
  }
  return out;
}

/**
 * A case per action of the table; the Record type makes an action without a case a type error,
 * and the first test checks the same at run time.
 */
const CASES: Record<AdminActionName, (v: Visitor) => Promise<Case>> = {
  "customer.create": async () => ({
    page: "/admin/customers",
    action: "/admin/customers",
    form: { name: "Made once", email: `${unique("once")}@example.test`, currency: "EUR" },
    customerId: (location) => /customers\/([^/?]+)/.exec(location)?.[1] ?? "",
  }),
  "customer.update": async () => {
    const a = await newAccount();
    const c = `/admin/customers/${a.customerId}`;
    const form = { name: "Renamed once", email: `${unique("upd")}@example.test`, company: "", country: "" };
    return { page: c, action: `${c}/profile`, form, customerId: a.customerId };
  },
  "customer.suspend": async () => {
    const a = await newAccount();
    const c = `/admin/customers/${a.customerId}`;
    return { page: c, action: `${c}/suspend`, form: { reason: "once" }, customerId: a.customerId };
  },
  "customer.unsuspend": async () => {
    const a = await newAccount();
    await auth.setCustomerStatus({ customerId: a.customerId, status: CustomerStatus.SUSPENDED, reason: "t" });
    const c = `/admin/customers/${a.customerId}`;
    return { page: c, action: `${c}/unsuspend`, form: { reason: "once" }, customerId: a.customerId };
  },
  "person.create": async () => {
    const a = await newAccount();
    const c = `/admin/customers/${a.customerId}`;
    const form = { name: "Added once", email: `${unique("p")}@example.test`, permissions: "view_billing" };
    return { page: `${c}/people`, action: `${c}/people`, form, customerId: a.customerId };
  },
  "person.link": async () => {
    const a = await newAccount();
    const c = `/admin/customers/${a.customerId}`;
    return {
      page: `${c}/people`,
      action: `${c}/people/${a.ownerId}/link`,
      form: {},
      customerId: a.customerId,
    };
  },
  "person.permissions": async () => {
    const a = await newAccount();
    const { person } = await auth.createPerson({
      customerId: a.customerId,
      name: "Member",
      email: `${unique("m")}@example.test`,
      permissions: [],
    });
    const c = `/admin/customers/${a.customerId}`;
    return {
      page: `${c}/people`,
      action: `${c}/people/${person!.id}/permissions`,
      form: { permissions: "view_billing" },
      customerId: a.customerId,
    };
  },
  "service.power": async () => {
    const a = await newAccount();
    const serviceId = await newMachine(a);
    const c = `/admin/customers/${a.customerId}`;
    return {
      page: `${c}/services`,
      action: `${c}/services/${serviceId}/power`,
      form: { action: "reboot" },
      customerId: a.customerId,
    };
  },
  "credit.adjust": async () => {
    const a = await newAccount();
    const c = `/admin/customers/${a.customerId}`;
    const form = { person: a.ownerId, amount: "5", reason: "once" };
    return { page: `${c}/balance`, action: `${c}/credit`, form, customerId: a.customerId };
  },
  "key.revoke": async () => {
    const a = await newAccount();
    const c = `/admin/customers/${a.customerId}`;
    return { page: `${c}/keys`, action: `${c}/keys/${a.keyId}/revoke`, form: {}, customerId: a.customerId };
  },
  "staff.create": async () => ({
    page: "/admin/staff",
    action: "/admin/staff",
    form: { name: "Staff once", email: `${unique("s")}@example.test`, permissions: "view_clients" },
    customerId: "",
  }),
  "staff.permissions": async () => {
    const s = await staffMember(["view_clients"]);
    return {
      page: "/admin/staff",
      action: `/admin/staff/${s.staffId}/permissions`,
      form: { permissions: "view_clients" },
      customerId: "",
    };
  },
  "staff.link": async () => {
    const s = await staffMember(["view_clients"]);
    return { page: "/admin/staff", action: `/admin/staff/${s.staffId}/link`, form: {}, customerId: "" };
  },
  "settings.customer_api": async (v) => ({
    page: "/admin/settings",
    action: "/admin/settings",
    form: await settingsNow(v, ["api", "hourly", "keys", "inventory", "vps"]),
    customerId: "",
  }),
  "settings.webhooks": async (v) => ({
    page: "/admin/settings",
    action: "/admin/settings/webhooks",
    form: await settingsNow(v, ["max_attempts", "base_delay"]),
    customerId: "",
  }),
  "partner.webhook_url": async () => {
    const p = await newPartner(PartnerStatus.ACTIVE);
    const base = `/admin/partners/${p.customerId}`;
    return { page: base, action: `${base}/webhook`, form: { url: "" }, customerId: p.customerId };
  },
  "partner.rotate_secret": async () => {
    const p = await newPartner(PartnerStatus.ACTIVE);
    const base = `/admin/partners/${p.customerId}`;
    return { page: `${base}/rotate`, action: `${base}/rotate`, form: {}, customerId: p.customerId };
  },
  "partner.approve": async () => {
    const p = await newPartner(PartnerStatus.PENDING);
    const base = `/admin/partners/${p.customerId}`;
    return { page: base, action: `${base}/approve`, form: {}, customerId: p.customerId };
  },
  "partner.suspend": async () => {
    const p = await newPartner(PartnerStatus.ACTIVE);
    const base = `/admin/partners/${p.customerId}`;
    return { page: base, action: `${base}/suspend`, form: {}, customerId: p.customerId };
  },
  "billing.bank_transfer_confirm": async () => {
    const t = await pendingTransfer();
    return {
      page: "/admin/bank-transfers",
      action: "/admin/bank-transfers/confirm",
      form: { reference: t.reference, received: "40" },
      customerId: t.customerId,
    };
  },
};

/** The audit rows this staff member wrote under the customer (or company-wide, newest 200). */
async function rowsOf(staffId: string, customerId: string, action: string) {
  const { actions } = await auth.listStaffActions({ customerId, limit: 200 });
  return actions.filter((r) => r.staffId === staffId && r.action === action);
}

/** The POST routes an admin router registers, as "/admin<path>". */
function postRoutes(router: Router): string[] {
  type Layer = { route?: { path: string; methods: Record<string, boolean> } };
  return (router.stack as Layer[])
    .filter((l) => l.route?.methods.post)
    .map((l) => `/admin${l.route!.path}`)
    .filter((p) => !/\/(sign-in|sign-out|set-password)$/.test(p));
}

describe("the admin panel's action table", () => {
  it("registers every write from the table and no other, each with a case here", () => {
    // Building the router makes no call: the clients are not reached.
    const router = adminRouter({} as PageClients, () => {}, "http://x", {} as OnceStore);
    const registered = postRoutes(router).sort();
    const declared = NAMES.map((n) => `/admin${entry(n).path}`).sort();
    assert.deepEqual(registered, declared);
    assert.deepEqual(Object.keys(CASES).sort(), [...NAMES].sort());
    for (const n of NAMES) {
      assert.equal(entry(n).form, "once", `${n} carries a one-time token`);
      assert.ok(entry(n).audit.length > 0, `${n} writes an audit row`);
    }
  });

  it("every write acts once per token: the same token twice gives the first answer and one audit row", async () => {
    const editor = await staffMember(["view_clients", "edit_clients", "approve_overpayments"]);
    const v = await signInVisitor(GATEWAY, "admin", editor.email);
    for (const name of NAMES) {
      const a = entry(name);
      const c = await CASES[name](v);
      const page = await v.get(c.page);
      assert.equal(page.status, 200, `${name}: ${c.page} answers 200`);
      const _once = onceIn(page.text, c.action);
      assert.ok(_once, `${name}: the form posting to ${c.action} is drawn with a one-time token`);
      const form = { _csrf: csrfIn(page.text), _once, ...c.form };
      // Company-wide rows of earlier cases (staff.create's link) are there already: count the new.
      const before = new Map<string, number>();
      for (const audit of a.audit)
        before.set(
          audit,
          typeof c.customerId === "string" ? (await rowsOf(editor.staffId, c.customerId, audit)).length : 0,
        );
      const first = await v.post(c.action, form);
      const second = await v.post(c.action, form);
      if ("redirect" in a.after) {
        assert.equal(first.status, 303, `${name}: ${first.text.slice(0, 300)}`);
        const where = new RegExp(
          `^${a.after.redirect.replace(/[?.]/g, "\\$&").replace(/:[a-z]+/g, "[^/&]+")}`,
        );
        assert.match(first.location, where, `${name} goes where the table says`);
        assert.equal(second.status, 303, `${name}: the repeat follows the first one's redirect`);
        assert.equal(second.location, first.location);
      } else {
        assert.equal(first.status, 200, `${name}: ${first.text.slice(0, 300)}`);
        assert.equal(second.status, 200);
        assert.match(second.text, /Form already sent/, `${name}: the repeat acts not again`);
      }
      const customerId = typeof c.customerId === "string" ? c.customerId : c.customerId(first.location);
      for (const audit of a.audit) {
        const rows = await rowsOf(editor.staffId, customerId, audit);
        assert.equal(rows.length - (before.get(audit) ?? 0), 1, `${name}: one ${audit} row`);
        assert.equal(rows[0].outcome, StaffActionOutcome.SUCCEEDED, `${name}: ${audit} done`);
      }
    }
  });

  for (const [role, permissions] of [
    ["view-only staff", ["view_clients"]],
    ["edit staff", ["view_clients", "edit_clients"]],
  ] as const) {
    it(`${role} are shown only menu items that open and controls the table allows them`, async () => {
      const s = await staffMember([...permissions]);
      const v = await signInVisitor(GATEWAY, "admin", s.email);
      const acct = await newAccount();
      await newMachine(acct);
      const partner = await newPartner(PartnerStatus.PENDING);
      await pendingTransfer();
      const nav = ADMIN_PAGES.map((p) => p.href);
      const first = await v.get("/admin/customers");
      const shownNav = nav.filter((href) => first.text.includes(`href="${href}"`));
      assert.deepEqual(
        shownNav,
        ADMIN_PAGES.filter((p) => (permissions as readonly string[]).includes(p.permission)).map(
          (p) => p.href,
        ),
      );
      const c = `/admin/customers/${acct.customerId}`;
      const pages = [
        ...shownNav,
        ...["", "/people", "/services", "/documents", "/balance", "/keys", "/partner", "/audit"].map(
          (t) => c + t,
        ),
        `/admin/partners/${partner.customerId}`,
        `/admin/partners/${partner.customerId}/activity`,
      ];
      for (const path of pages) {
        const r = await v.get(path);
        assert.equal(r.status, 200, `${role}: ${path} opens`);
        const forms = [...r.text.matchAll(/<form method="post" action="([^"]+)"/g)]
          .map((m) => m[1])
          .filter((f) => f !== "/admin/sign-out");
        for (const f of forms) {
          const name = actionOf(f);
          assert.ok(name, `${path}: the form posting to ${f} is in the table`);
          assert.ok(
            (permissions as readonly string[]).includes(entry(name).permission),
            `${role}: ${path} draws ${name}, which needs ${entry(name).permission}`,
          );
          assert.ok(onceIn(r.text, f), `${path}: ${f} carries a one-time token`);
        }
        if (!permissions.includes("edit_clients" as never)) {
          assert.deepEqual(forms, [], `${role}: ${path} draws no write form`);
          assert.doesNotMatch(r.text, /<button[^>]*class="danger"/, `${role}: ${path} no write button`);
        }
      }
      const settings = await v.get("/admin/settings");
      const inputs = [...settings.text.matchAll(/<input [^>]*>/g)].filter((m) => !/type="hidden"/.test(m[0]));
      if (permissions.length === 1) assert.deepEqual(inputs, [], "view-only staff see no Settings input");
      else assert.ok(inputs.length > 0);
    });
  }
});
