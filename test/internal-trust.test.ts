import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { AuthStaffService } from "@hb/contracts/hb/auth/v1/auth_staff_pb";
import { PartnerLookupService } from "@hb/contracts/hb/auth/v1/partner_lookup_pb";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { PortalService, Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import { BillingDeskService } from "@hb/contracts/hb/billing/v1/billing_desk_pb";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";
import {
  PaymentEventService,
  TopUpService,
  TopUpStaffService,
} from "@hb/contracts/hb/billing/v1/payments_pb";
import { PowerAction } from "@hb/contracts/hb/compute/v1/actions_pb";
import { ComputeDeskService } from "@hb/contracts/hb/compute/v1/compute_desk_pb";
import { ComputeService } from "@hb/contracts/hb/compute/v1/compute_pb";
import { MachineKind } from "@hb/contracts/hb/compute/v1/machines_pb";
import { ComputeProvisioningService } from "@hb/contracts/hb/compute/v1/provisioning_pb";
import { WebhooksStaffService } from "@hb/contracts/hb/webhooks/v1/webhooks_staff_pb";
import { loadTlsIdentity, rpcClient } from "@hb/platform";
import postgres from "postgres";
import { serviceDbUrl } from "../scripts/db-roles.ts";
import { certFiles, ensureDevCerts } from "../scripts/dev-certs.ts";
import { auth, billing, newAccount } from "./helpers.ts";
import { stackClient } from "./support/clients.ts";

// Internal calls are mutual TLS, and each service definition names the services that may call it
// (packages/platform/src/allow-list.ts). These calls go straight to the backends, past the gateway.

const env = process.env;

/** The gRPC status a call ended with, by name ("permission_denied"), or "ok". */
async function codeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (err) {
    return Code[ConnectError.from(err).code].replace(/[A-Z]/g, (c, i) => (i ? "_" : "") + c.toLowerCase());
  }
  return "ok";
}

/** The status of an empty call to auth's `method` over a bare grpc-js channel with `credentials`. */
async function rawCallStatus(credentials: grpc.ChannelCredentials, method: string): Promise<grpc.status> {
  const channel = new grpc.Client(env.AUTH_ADDR!, credentials);
  try {
    return await new Promise<grpc.status>((resolve) => {
      channel.makeUnaryRequest(
        method,
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.alloc(0),
        new grpc.Metadata(),
        { deadline: Date.now() + 5000 },
        (err) => resolve(err ? err.code : grpc.status.OK),
      );
    });
  } finally {
    channel.close();
  }
}

describe("internal calls between services", () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("refuse a staff RPC to the gateway's certificate and create nothing", async () => {
    const acct = await newAccount();
    const asGateway = stackClient(env, [AuthStaffService], "AUTH_ADDR", 10_000, "gateway");
    const code = await codeOf(
      asGateway.client.createKey({ personId: acct.ownerId, label: "stolen", scopes: [], ipAllowlist: "" }),
    );
    asGateway.close();
    assert.equal(code, "permission_denied");
    const { keys } = await auth.listKeys({ personId: acct.ownerId });
    assert.ok(!keys.some((k) => k.label === "stolen"));
  });

  it("refuse a staff credit adjustment to the gateway's certificate and leave the balance alone", async () => {
    const acct = await newAccount();
    const caller = { customerId: acct.customerId, personId: acct.ownerId, currency: "EUR" };
    const before = await billing.getAccount({ caller });
    const asGateway = stackClient(env, [BillingStaffService], "BILLING_ADDR", 10_000, "gateway");
    const code = await codeOf(
      asGateway.client.adminAdjustCredit({
        personId: acct.ownerId,
        customerId: acct.customerId,
        amount: "1000",
        currency: "EUR",
        description: "free money",
      }),
    );
    asGateway.close();
    assert.equal(code, "permission_denied");
    assert.deepEqual(await billing.getAccount({ caller }), before);
  });

  it("refuse a bank transfer confirmation to the gateway's certificate, and the payment webhook's RPC to the pages'", async () => {
    const acct = await newAccount();
    const caller = {
      customerId: acct.customerId,
      personId: acct.ownerId,
      permissions: ["pay_invoices"],
      currency: "EUR",
    };
    // The portal's pages ask for top-ups, under the portal's own certificate.
    const asPanel = stackClient(env, [TopUpService, PaymentEventService], "BILLING_ADDR", 10_000, "portal");
    const asked = await asPanel.client.requestBankTransfer({
      caller,
      amount: "50",
      idempotencyKey: "trust-test-0001",
    });
    const before = await billing.getAccount({ caller });
    const asGateway = stackClient(env, [TopUpStaffService, TopUpService], "BILLING_ADDR", 10_000, "gateway");
    const codes = [
      await codeOf(
        asGateway.client.confirmBankTransfer({
          reference: asked.topUp!.reference,
          receivedAmount: "50",
          staffId: acct.ownerId,
        }),
      ),
      await codeOf(
        asGateway.client.requestBankTransfer({ caller, amount: "50", idempotencyKey: "trust-test-0002" }),
      ),
      await codeOf(asPanel.client.handleStripeEvent({ payload: new Uint8Array(), signature: "t=1,v1=0" })),
    ];
    asGateway.close();
    asPanel.close();
    assert.deepEqual(codes, ["permission_denied", "permission_denied", "permission_denied"]);
    assert.deepEqual(await billing.getAccount({ caller }), before);
  });

  it("allow the admin surface's certificate its staff RPCs", async () => {
    const asAdmin = stackClient(env, [AuthStaffService], "AUTH_ADDR", 10_000, "admin");
    const { settings } = await asAdmin.client.getSettings({});
    asAdmin.close();
    assert.ok(settings);
  });

  it("allow the webhooks service's certificate the partner look-up and nothing of staff", async () => {
    const acct = await newAccount();
    await auth.createPartner({ customerId: acct.customerId, status: PartnerStatus.ACTIVE });
    const asWebhooks = stackClient(
      env,
      [PartnerLookupService, AuthStaffService],
      "AUTH_ADDR",
      10_000,
      "webhooks",
    );
    const { partners } = await asWebhooks.client.getPartnerForDelivery({ customerIds: [acct.customerId] });
    assert.equal(partners[0]?.customerId, acct.customerId);
    const code = await codeOf(
      asWebhooks.client.createKey({ personId: acct.ownerId, label: "w", scopes: [], ipAllowlist: "" }),
    );
    const rotate = await codeOf(asWebhooks.client.rotatePartnerSecret({ customerId: acct.customerId }));
    asWebhooks.close();
    assert.equal(code, "permission_denied");
    assert.equal(rotate, "permission_denied");
  });

  it("refuse the partner look-up, which hands out signing secrets, to the gateway's certificate", async () => {
    const acct = await newAccount();
    const asGateway = stackClient(env, [PartnerLookupService], "AUTH_ADDR", 10_000, "gateway");
    const code = await codeOf(asGateway.client.getPartnerForDelivery({ customerIds: [acct.customerId] }));
    asGateway.close();
    assert.equal(code, "permission_denied");
  });

  it("refuse the pages' sign-in and session RPCs to the gateway's certificate", async () => {
    const asGateway = stackClient(env, [PortalService], "AUTH_ADDR", 10_000, "gateway");
    const signIn = await codeOf(
      asGateway.client.signIn({ realm: Realm.ADMIN, email: "nobody@example.test", password: "x".repeat(12) }),
    );
    const staff = await codeOf(asGateway.client.listStaff({}));
    asGateway.close();
    assert.equal(signIn, "permission_denied");
    assert.equal(staff, "permission_denied");
    const webhooksStaff = stackClient(env, [WebhooksStaffService], "WEBHOOKS_ADDR", 10_000, "gateway");
    const settings = await codeOf(webhooksStaff.client.getProgrammeSettings({}));
    webhooksStaff.close();
    assert.equal(settings, "permission_denied");
  });

  it("allow the admin panel's certificate its staff and sign-in RPCs, never billing's or compute's", async () => {
    const acct = await newAccount();
    const asPanelAuth = stackClient(
      env,
      [AuthStaffService, PortalService, AuthService],
      "AUTH_ADDR",
      10_000,
      "admin-panel",
    );
    const { customer } = await asPanelAuth.client.getCustomer({ customerId: acct.customerId });
    assert.equal(customer?.id, acct.customerId);
    assert.ok(Array.isArray((await asPanelAuth.client.listStaff({})).staff));
    // The API's key check is the gateway's alone.
    assert.equal(await codeOf(asPanelAuth.client.verify({ key: acct.key })), "permission_denied");
    asPanelAuth.close();
    const caller = { customerId: acct.customerId, personId: acct.ownerId, currency: "EUR" };
    const b = stackClient(env, [BillingService, BillingStaffService], "BILLING_ADDR", 10_000, "admin-panel");
    assert.equal(await codeOf(b.client.getAccount({ caller })), "permission_denied");
    assert.equal(
      await codeOf(
        b.client.adminAdjustCredit({
          personId: acct.ownerId,
          customerId: acct.customerId,
          amount: "1000",
          currency: "EUR",
          description: "free money",
        }),
      ),
      "permission_denied",
    );
    b.close();
    const c = stackClient(env, [ComputeService], "COMPUTE_ADDR", 10_000, "admin-panel");
    assert.equal(await codeOf(c.client.listOsImages({})), "permission_denied");
    c.close();
  });

  it("allow the support desk's billing and compute definitions to the admin panel, never to the gateway", async () => {
    const acct = await newAccount();
    const panel = stackClient(env, [BillingDeskService], "BILLING_ADDR", 10_000, "admin-panel");
    const view = await panel.client.deskGetCustomerBilling({ customerId: acct.customerId });
    panel.close();
    assert.equal(view.servicesTotal, 0);
    const asGateway = stackClient(env, [BillingDeskService], "BILLING_ADDR", 10_000, "gateway");
    const credit = {
      customerId: acct.customerId,
      personId: acct.ownerId,
      staffId: crypto.randomUUID(),
      amount: "1000",
      reason: "free money",
    };
    assert.equal(await codeOf(asGateway.client.deskAdjustCredit(credit)), "permission_denied");
    asGateway.close();
    const computeAsGateway = stackClient(env, [ComputeDeskService], "COMPUTE_ADDR", 10_000, "gateway");
    const power = {
      customerId: acct.customerId,
      serviceId: crypto.randomUUID(),
      action: PowerAction.STOP,
    };
    assert.equal(await codeOf(computeAsGateway.client.deskRunPowerAction(power)), "permission_denied");
    computeAsGateway.close();
    const computeAsPanel = stackClient(env, [ComputeDeskService], "COMPUTE_ADDR", 10_000, "admin-panel");
    // Allowed through: the machine does not exist.
    assert.equal(await codeOf(computeAsPanel.client.deskRunPowerAction(power)), "not_found");
    computeAsPanel.close();
  });

  it("refuse the portal's certificate every staff write of billing and compute: a customer page is not a staff page", async () => {
    const acct = await newAccount();
    const caller = {
      customerId: acct.customerId,
      personId: acct.ownerId,
      permissions: ["pay_invoices"],
      currency: "EUR",
    };
    const portal = stackClient(
      env,
      [BillingDeskService, TopUpStaffService, TopUpService],
      "BILLING_ADDR",
      10_000,
      "portal",
    );
    const asked = await portal.client.requestBankTransfer({
      caller,
      amount: "50",
      idempotencyKey: "trust-test-portal",
    });
    const before = await billing.getAccount({ caller });
    const refused = [
      await codeOf(
        portal.client.deskAdjustCredit({
          customerId: acct.customerId,
          personId: acct.ownerId,
          staffId: crypto.randomUUID(),
          amount: "1000",
          reason: "free money",
          idempotencyKey: crypto.randomUUID(),
        }),
      ),
      await codeOf(portal.client.deskGetCustomerBilling({ customerId: acct.customerId })),
      await codeOf(portal.client.deskSettleWrite({ idempotencyKey: crypto.randomUUID() })),
      await codeOf(
        portal.client.confirmBankTransfer({
          reference: asked.topUp?.reference ?? "",
          receivedAmount: "50",
          staffId: crypto.randomUUID(),
        }),
      ),
      await codeOf(portal.client.listBankTransfers({})),
    ];
    portal.close();
    const compute = stackClient(env, [ComputeDeskService], "COMPUTE_ADDR", 10_000, "portal");
    refused.push(
      await codeOf(
        compute.client.deskRunPowerAction({
          customerId: acct.customerId,
          serviceId: crypto.randomUUID(),
          action: PowerAction.STOP,
        }),
      ),
    );
    compute.close();
    assert.deepEqual(refused, Array(6).fill("permission_denied"));
    assert.deepEqual(await billing.getAccount({ caller }), before, "no money moved");
  });

  it("refuse compute's provisioning to anyone but billing", async () => {
    const acct = await newAccount();
    const request = { serviceId: crypto.randomUUID(), customerId: acct.customerId, kind: MachineKind.VPS };
    for (const as of ["gateway", "admin"] as const) {
      const c = stackClient(env, [ComputeProvisioningService], "COMPUTE_ADDR", 10_000, as);
      assert.equal(await codeOf(c.client.provision(request)), "permission_denied", as);
      c.close();
    }
  });

  it("refuse a caller that presents no client certificate", async () => {
    const { TLS_CA } = certFiles(env.HB_CERTS_DIR!, "admin");
    const ca = loadTlsIdentity({ TLS_CA, TLS_CERT: TLS_CA, TLS_KEY: TLS_CA }).ca;
    // The server's certificate is trusted; only the caller's is missing.
    const status = await rawCallStatus(
      grpc.credentials.createSsl(ca),
      `/${AuthStaffService.typeName}/GetSettings`,
    );
    assert.notEqual(status, grpc.status.OK);
  });

  it("refuse a plaintext caller", async () => {
    const status = await rawCallStatus(grpc.credentials.createInsecure(), `/${AuthService.typeName}/Verify`);
    assert.notEqual(status, grpc.status.OK);
  });

  it("refuse a certificate named admin that another authority issued", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hb-rogue-ca-"));
    dirs.push(dir);
    const rogue = await ensureDevCerts(path.join(dir, "certs"));
    // It trusts the platform's CA, so only its own certificate is in question.
    const tls = {
      ...loadTlsIdentity(certFiles(rogue, "admin")),
      ca: loadTlsIdentity(certFiles(env.HB_CERTS_DIR!, "admin")).ca,
    };
    const c = rpcClient("grpc-js", AuthStaffService, env.AUTH_ADDR!, { timeoutMs: 5000, tls });
    const code = await codeOf(c.client.getSettings({}));
    c.close();
    assert.notEqual(code, "ok");
  });
});

describe("each service's database role", () => {
  const as = (schema: string) =>
    postgres(serviceDbUrl(env.DATABASE_URL!, schema), { max: 1, onnotice: () => {} });

  it("is the one each backend's connections are made as", async () => {
    const sql = postgres(env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    try {
      // connectDb names each pool after its schema (application_name).
      const rows = await sql`
        select distinct application_name as app, usename as role from pg_stat_activity
        where datname = current_database() and application_name in ('auth', 'billing', 'compute', 'webhooks')`;
      const roles = new Map(rows.map((r) => [r.app as string, r.role as string]));
      for (const s of ["auth", "billing", "compute", "webhooks"]) assert.equal(roles.get(s), `hb_${s}`, s);
    } finally {
      await sql.end({ timeout: 5 });
    }
  });

  it("is reached through PostgreSQL's Unix socket when the server runs on this host", {
    skip: !existsSync("/var/run/postgresql/.s.PGSQL.5432") && "no PostgreSQL socket in /var/run/postgresql",
  }, async () => {
    const sql = postgres(env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    try {
      // The launcher chose the socket (scripts/stack.ts); a TCP connection would show 127.0.0.1.
      const rows = await sql`
        select application_name as app, coalesce(host(client_addr), 'socket') as via from pg_stat_activity
        where datname = current_database() and application_name in ('auth', 'billing', 'compute', 'webhooks')`;
      assert.ok(rows.length >= 4, "every backend holds a connection");
      assert.deepEqual([...new Set(rows.map((r) => r.via as string))], ["socket"]);
    } finally {
      await sql.end({ timeout: 5 });
    }
  });

  it("reads its own schema", async () => {
    const sql = as("billing");
    try {
      const [row] = await sql`select count(*)::int as n from billing.schema_migrations`;
      assert.ok(row.n > 0);
    } finally {
      await sql.end({ timeout: 5 });
    }
  });

  it("cannot read or write another service's schema", async () => {
    const sql = as("billing");
    const denied = async (query: Promise<unknown>) => {
      try {
        await query;
        return "allowed";
      } catch (err) {
        return (err as { code?: string }).code;
      }
    };
    try {
      // 42501: insufficient_privilege.
      assert.equal(await denied(sql`select secret_hash from auth.api_keys limit 1`), "42501");
      assert.equal(await denied(sql`delete from webhooks.deliveries`), "42501");
      assert.equal(await denied(sql`create table compute.planted (x int)`), "42501");
    } finally {
      await sql.end({ timeout: 5 });
    }
  });
});
