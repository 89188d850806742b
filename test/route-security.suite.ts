/**
 * The key check, for EVERY route of the gateway's route table: the refusals the spec defines
 * (no key, a key without the route's scope, a person without the route's permission, a suspended
 * customer on a write, the Customer API off, the route's module off, an allowlist miss), each
 * asked of the gateway over HTTP (its key-table path; auth for signed routes) and of auth.Verify
 * directly with the need the gateway would send, and both must answer alike. A route added to the
 * table is covered without a line here (the model is unkey's test_route_roles). One account set-up
 * per kind of case, not per route. On the company-wide stack (test/company-wide.test.ts), and last
 * there: the switches would disturb other test files, and this suite leaves them off.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { AuthService, Module } from "@hb/contracts/hb/auth/v1/auth_pb";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";
import { BillingCycle, ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { ALL_PERMISSIONS, SCOPES } from "@hb/platform";
import { KEY_REFUSALS, type KeyRefusal } from "@hb/platform/key-decision";
import { signResellerRequest } from "@hb/webhook-signature";
import { type HttpMethod, needOf, type RouteDef, type RouteNeed } from "../services/gateway/src/route.ts";
import { allRoutes } from "../services/gateway/src/routes/index.ts";
import type { OwnStack } from "./own-stack.ts";
import { stackClient } from "./support/clients.ts";
import { companyStack } from "./support/company-stack.ts";
import { eventually } from "./support/eventually.ts";

type Keyed = { def: RouteDef; method: HttpMethod; path: string; need: RouteNeed };
const table = allRoutes("http://127.0.0.1");
const keyed: Keyed[] = table.flatMap((def) =>
  def.auth === "none"
    ? []
    : [{ def, method: def.method, path: def.path, need: needOf({ method: def.method, auth: def.auth }) }],
);
const name = (r: Keyed) => `${r.method.toUpperCase()} ${r.path}`;

/** Any id: the key check answers before a path parameter is read. */
const ANY_ID = "0195e3a4-5c6d-7e7f-8a9b-0c1d2e3f4a5b";
const fill = (path: string) => path.replace(/:\w+/g, ANY_ID);

/** The codes of the key check; a request that gets past it answers something else. */
const KEY_CHECK_CODES = new Set([
  "UNAUTHORIZED",
  "SCOPE_REQUIRED",
  "FORBIDDEN",
  "ACCOUNT_SUSPENDED",
  "FEATURE_DISABLED",
]);

interface Credential {
  key?: string;
  /** The partner's signing secret: every request is signed (unsigned routes ignore it). */
  secret?: string;
}
interface Answer {
  code: string;
  message: string;
  scope?: string;
  status?: number;
}

describe("the key check on every route (gateway key table and auth.Verify agree)", () => {
  let s: OwnStack;
  let verifier: ReturnType<typeof stackClient<[typeof AuthService]>>;
  let billing: ReturnType<typeof stackClient<[typeof BillingService, typeof BillingStaffService]>>["client"];
  let closeBilling = () => {};

  /** A partner account (every route, reseller ones included, can be asked with its keys). */
  const newPartnerAccount = async () => {
    const { customer, owner } = await s.auth.createCustomer({
      name: "Route Security",
      email: `rs-${Date.now()}-${Math.random().toString(36).slice(2)}@example.test`,
      company: "Route Security Co",
      country: "DE",
      currency: "EUR",
    });
    const { signingSecret } = await s.auth.createPartner({
      customerId: customer!.id,
      status: PartnerStatus.ACTIVE,
    });
    return { customerId: customer!.id, ownerId: owner!.id, secret: signingSecret };
  };
  const newKey = async (personId: string, scopes: readonly string[], ipAllowlist = "") =>
    (await s.auth.createKey({ personId, label: "route-security", scopes: [...scopes], ipAllowlist }))
      .secretKey;

  async function http(r: Keyed, cred: Credential): Promise<Answer> {
    const body = r.method === "get" ? undefined : "{}";
    const headers: Record<string, string> = {};
    if (cred.key) headers.authorization = `Bearer ${cred.key}`;
    if (body) headers["content-type"] = "application/json";
    if (cred.secret) Object.assign(headers, signResellerRequest({ body: body ?? "", secret: cred.secret }));
    const gone = new AbortController();
    const res = await fetch(`${s.stack.gatewayUrl}/api/v1${fill(r.path)}`, {
      method: r.method.toUpperCase(),
      headers,
      body,
      signal: gone.signal,
    });
    // An accepted event stream stays open: its status says enough.
    if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
      gone.abort();
      return { status: res.status, code: "", message: "" };
    }
    const j = (await res.json()) as { code?: string; error?: string; scope?: string };
    return { status: res.status, code: j.code ?? "", message: j.error ?? "", scope: j.scope };
  }

  /** auth.Verify, asked as the gateway asks it for this route. */
  async function verify(r: Keyed, cred: Credential): Promise<Answer | undefined> {
    const body = r.method === "get" ? "" : "{}";
    const sig = cred.secret ? signResellerRequest({ body, secret: cred.secret }) : undefined;
    const v = await verifier.client.verify({
      key: cred.key ?? "",
      sourceIp: "127.0.0.1",
      scope: r.need.scope,
      permissionsAny: [...r.need.permissions],
      isWrite: r.need.write,
      module:
        r.need.module === "inventory"
          ? Module.INVENTORY
          : r.need.module === "vps"
            ? Module.VPS
            : Module.UNSPECIFIED,
      ...(r.need.signed && sig
        ? {
            resellerTimestamp: sig["X-Reseller-Timestamp"],
            resellerSignature: sig["X-Reseller-Signature"],
            rawBody: new TextEncoder().encode(body),
          }
        : {}),
    });
    return v.refusal
      ? { code: v.refusal.code, message: v.refusal.message, scope: v.refusal.scope }
      : undefined;
  }

  const STATUS: Record<string, number> = {
    UNAUTHORIZED: 401,
    SCOPE_REQUIRED: 403,
    FORBIDDEN: 403,
    ACCOUNT_SUSPENDED: 403,
    FEATURE_DISABLED: 403,
  };

  /**
   * Asks every route in `routes` both ways and checks each answer: `want` is the refusal (a
   * missing key's 401 names the header, so only its code is compared), or "passes" (the key
   * check lets it through: the route answers anything but a key-check refusal).
   */
  async function expectAll(
    routes: Keyed[],
    credOf: (r: Keyed) => Credential,
    want: (r: Keyed) => KeyRefusal | "passes",
    opts: { compareMessage?: boolean } = {},
  ): Promise<number> {
    const problems: string[] = [];
    const queue = [...routes];
    const worker = async () => {
      for (let r = queue.shift(); r; r = queue.shift()) {
        const cred = credOf(r);
        const w = want(r);
        const [h, v] = await Promise.all([http(r, cred), verify(r, cred)]);
        if (w === "passes") {
          if (KEY_CHECK_CODES.has(h.code))
            problems.push(`${name(r)}: gateway refused ${h.code} (${h.message})`);
          if (v) problems.push(`${name(r)}: Verify refused ${v.code} (${v.message})`);
          continue;
        }
        const got = `${h.status} ${h.code}${h.scope ? ` scope=${h.scope}` : ""}`;
        const wanted = `${STATUS[w.code]} ${w.code}${w.scope ? ` scope=${w.scope}` : ""}`;
        if (got !== wanted) problems.push(`${name(r)}: gateway ${got} (${h.message}), want ${wanted}`);
        if (v?.code !== w.code || (v.scope || undefined) !== w.scope) {
          problems.push(`${name(r)}: Verify ${v?.code} ${v?.scope ?? ""}, want ${w.code} ${w.scope ?? ""}`);
        }
        if (opts.compareMessage !== false) {
          if (h.message !== w.message)
            problems.push(`${name(r)}: gateway says "${h.message}", want "${w.message}"`);
          if (v && v.message !== w.message)
            problems.push(`${name(r)}: Verify says "${v.message}", want "${w.message}"`);
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    assert.deepEqual(problems, []);
    return routes.length;
  }

  /**
   * Until the gateway's key table has the key and answers it as auth now would ("passes": the key
   * check lets it through, whatever the route then answers).
   */
  const served = (r: Keyed, cred: Credential, code: string) =>
    eventually(
      async () => {
        const h = await http(r, cred);
        return code === "passes" ? !KEY_CHECK_CODES.has(h.code) && (h.status ?? 500) < 500 : h.code === code;
      },
      20_000,
      50,
    );

  // The accounts, one per kind of case.
  let owner: { customerId: string; ownerId: string; secret: string; full: string; allowlisted: string };
  /** Keys of the owner lacking one scope each. */
  const lacking = new Map<string, string>();
  /** Members holding every permission but one route's set, by that set. */
  const without = new Map<string, { key: string; personId: string }>();
  let suspended: { key: string; secret: string };
  /** A service of the owner's, without a machine, made by the reseller test. */
  let resellerServiceId = "";
  const permissionSet = (r: Keyed) => [...r.need.permissions].sort().join(",");
  const anyRoute = (pred: (r: Keyed) => boolean) => {
    const r = keyed.find(pred);
    assert.ok(r, "a route of that kind exists");
    return r;
  };

  before(async () => {
    s = await companyStack();
    verifier = stackClient(s.stack.env, [AuthService], "AUTH_ADDR", 10_000, "gateway");
    const b = stackClient(s.stack.env, [BillingService, BillingStaffService], "BILLING_ADDR");
    billing = b.client;
    closeBilling = () => b.close();
    // Every request of a key counts in its hourly window; this test sends a few hundred.
    await s.auth.updateSettings({ hourlyRequestLimit: 1_000_000, activeKeyLimit: 1000 });

    // The accounts are independent: made side by side, each change waits for the gateway's ack.
    const [o, sus] = await Promise.all([newPartnerAccount(), newPartnerAccount()]);
    const [full, allowlisted] = await Promise.all([
      newKey(o.ownerId, SCOPES),
      newKey(o.ownerId, SCOPES, "192.0.2.1"),
      ...SCOPES.filter((sc) => sc !== "read").map(async (scope) => {
        lacking.set(
          scope,
          await newKey(
            o.ownerId,
            SCOPES.filter((sc) => sc !== scope),
          ),
        );
        return "";
      }),
      // A member's keys are made while the member holds every permission (a scope needs its
      // permission at creation); the permissions are then taken away, as an owner would later.
      ...[...new Set(keyed.map(permissionSet))].map(async (set) => {
        const { person } = await s.auth.createPerson({
          customerId: o.customerId,
          name: "Member",
          email: `rs-m-${Date.now()}-${Math.random().toString(36).slice(2)}@example.test`,
          permissions: [...ALL_PERMISSIONS],
        });
        const key = await newKey(person!.id, SCOPES);
        const held = ALL_PERMISSIONS.filter((p) => !set.split(",").includes(p));
        await s.auth.setPermissions({ personId: person!.id, permissions: held });
        without.set(set, { key, personId: person!.id });
        return "";
      }),
      (async () => {
        suspended = { key: await newKey(sus.ownerId, SCOPES), secret: sus.secret };
        await s.auth.setCustomerStatus({ customerId: sus.customerId, status: CustomerStatus.SUSPENDED });
        return "";
      })(),
    ]);
    owner = { ...o, full, allowlisted };

    // Wait until the gateway serves every key as auth now sees it (a key's first request on a
    // replica is confirmed by auth; every later one is the key table's alone).
    const probe = anyRoute((r) => !r.need.signed && r.need.write && r.need.scope === "services");
    await served(probe, { key: owner.full }, "passes");
    await served(probe, { key: owner.allowlisted }, "FORBIDDEN");
    await served(probe, { key: lacking.get("services") }, "SCOPE_REQUIRED");
    for (const [scope, key] of lacking)
      await served(
        anyRoute((r) => r.need.scope === scope),
        { key },
        "SCOPE_REQUIRED",
      );
    for (const [set, m] of without) {
      await served(
        anyRoute((r) => permissionSet(r) === set),
        { key: m.key, secret: owner.secret },
        "FORBIDDEN",
      );
    }
    await served(probe, { key: suspended.key }, "ACCOUNT_SUSPENDED");
  });

  after(async () => {
    verifier?.close();
    closeBilling();
  });

  it("every route but the documentation is keyed, and every keyed route names a permission", () => {
    const open = table.filter((d) => d.auth === "none").map((d) => `${d.method.toUpperCase()} ${d.path}`);
    assert.deepEqual(open.sort(), [
      "GET /docs",
      "GET /docs/assets/:file",
      "GET /docs/plain",
      "GET /guide.md",
      "GET /openapi.json",
    ]);
    assert.deepEqual(
      keyed.filter((r) => r.need.permissions.length === 0).map(name),
      [],
      "a keyed route without a permission would let any team member through",
    );
    assert.ok(keyed.length > 50, `the table has its routes (${keyed.length})`);
  });

  it("no key: 401 on every route", async () => {
    await expectAll(
      keyed,
      () => ({}),
      () => KEY_REFUSALS.unknownKey,
      { compareMessage: false },
    );
  });

  it("an allowlist miss: 403 FORBIDDEN on every route", async () => {
    await expectAll(
      keyed,
      () => ({ key: owner.allowlisted, secret: owner.secret }),
      () => KEY_REFUSALS.allowlist,
    );
  });

  it("a key without the route's scope: 403 SCOPE_REQUIRED naming it (read is on every key)", async () => {
    const scoped = keyed.filter((r) => r.need.scope !== "read");
    await expectAll(
      scoped,
      (r) => ({ key: lacking.get(r.need.scope), secret: owner.secret }),
      (r) => KEY_REFUSALS.scope(r.need.scope),
    );
  });

  it("a person without the route's permission: 403 FORBIDDEN (reseller routes too)", async () => {
    await expectAll(
      keyed,
      (r) => ({ key: without.get(permissionSet(r))?.key, secret: owner.secret }),
      () => KEY_REFUSALS.permission,
    );
  });

  it("a suspended customer: 403 ACCOUNT_SUSPENDED on every write, reads pass", async () => {
    await expectAll(
      keyed,
      () => ({ key: suspended.key, secret: suspended.secret }),
      (r) => (r.need.write ? KEY_REFUSALS.suspended : "passes"),
    );
  });

  it("a partner team member with every permission removed cannot suspend, terminate, set the webhook URL or order", async () => {
    const product = await billing.adminCreateProduct({
      name: `rs plan ${Date.now()}`,
      kind: ProductKind.VPS,
      prices: [{ cycle: BillingCycle.MONTHLY, price: { currency: "EUR", amount: "10.0000" } }],
      vcpus: 1,
      memoryMb: 1024,
      diskGb: 10,
      location: "fra1",
      osImages: ["debian-12"],
      currency: "EUR",
    });
    const { service } = await billing.adminCreateService({
      customerId: owner.customerId,
      productId: product.product!.id,
      kind: ProductKind.VPS,
      status: ServiceStatus.ACTIVE,
    });
    const { person } = await s.auth.createPerson({
      customerId: owner.customerId,
      name: "Stripped",
      email: `rs-none-${Date.now()}@example.test`,
      permissions: [...ALL_PERMISSIONS],
    });
    const key = await newKey(person!.id, SCOPES);
    await s.auth.setPermissions({ personId: person!.id, permissions: [] });
    const call = (method: string, path: string, body: unknown) => {
      const raw = JSON.stringify(body);
      return fetch(`${s.stack.gatewayUrl}/api/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
          ...signResellerRequest({ body: raw, secret: owner.secret }),
        },
        body: raw,
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as { code?: string } }));
    };
    const id = service!.id;
    resellerServiceId = id;
    const attempts: [string, string, unknown][] = [
      ["POST", `/reseller/services/${id}/suspend`, {}],
      ["POST", `/reseller/services/${id}/terminate`, {}],
      ["PUT", "/reseller/account/webhook", { webhookUrl: "https://hooks.example.com/x" }],
      [
        "POST",
        "/reseller/orders",
        { externalOrderId: "x-1", items: [{ productId: product.product!.id, billingCycle: "monthly" }] },
      ],
    ];
    // The permissions were taken away in auth: auth answers every signed route, at once.
    for (const [method, path, body] of attempts) {
      const r = await call(method, path, body);
      assert.deepEqual([r.status, r.body.code], [403, "FORBIDDEN"], `${method} ${path}`);
    }
    const read = await fetch(`${s.stack.gatewayUrl}/api/v1/services/${id}`, {
      headers: { authorization: `Bearer ${owner.full}` },
    });
    const { data } = (await read.json()) as { data: { status: string } };
    assert.equal(data.status, "active", "the service was neither suspended nor terminated");
  });

  it("GET /services/{id} answers 503 while compute is down, not a service without a machine", async () => {
    assert.ok(resellerServiceId, "the reseller test made the service");
    const get = () =>
      fetch(`${s.stack.gatewayUrl}/api/v1/services/${resellerServiceId}`, {
        headers: { authorization: `Bearer ${owner.full}` },
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));
    const up = await get();
    assert.equal(up.status, 200);
    assert.equal((up.body.data as { machine: unknown }).machine, null, "no machine in compute");
    const compute = s.stack.procs.get("compute");
    assert.ok(compute);
    const exited = new Promise((r) => compute.once("exit", r));
    compute.kill("SIGKILL");
    await exited;
    const down = await get();
    assert.deepEqual([down.status, down.body.code], [503, "SERVICE_UNAVAILABLE"], JSON.stringify(down.body));
  });

  it("the route's module off: 403 FEATURE_DISABLED on its routes", async () => {
    await s.auth.updateSettings({ inventoryModule: false, vpsModule: false });
    const moduled = keyed.filter((r) => r.need.module);
    assert.ok(
      moduled.some((r) => r.need.module === "inventory") && moduled.some((r) => r.need.module === "vps"),
    );
    for (const m of ["inventory", "vps"] as const) {
      await served(
        anyRoute((r) => r.need.module === m),
        { key: owner.full },
        "FEATURE_DISABLED",
      );
    }
    await expectAll(
      moduled,
      () => ({ key: owner.full, secret: owner.secret }),
      (r) => (r.need.module === "inventory" ? KEY_REFUSALS.inventoryOff : KEY_REFUSALS.vpsOff),
    );
  });

  it("the Customer API off: 403 FEATURE_DISABLED on every route, with a key or without", async () => {
    await s.auth.updateSettings({ customerApiEnabled: false });
    await served(keyed[0], { key: owner.full, secret: owner.secret }, "FEATURE_DISABLED");
    await expectAll(
      keyed,
      () => ({ key: owner.full, secret: owner.secret }),
      () => KEY_REFUSALS.apiDisabled,
    );
    await expectAll(
      keyed,
      () => ({}),
      () => KEY_REFUSALS.apiDisabled,
    );
  });
});
