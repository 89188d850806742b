import { ApiKeyStatus } from "@hb/contracts/hb/auth/v1/api_keys_pb";
import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { AuthStaffService } from "@hb/contracts/hb/auth/v1/auth_staff_pb";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { PortalService, Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";
import { BillingCycle, ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { ComputeStaffService } from "@hb/contracts/hb/compute/v1/compute_staff_pb";
import { InstanceState, MachineKind } from "@hb/contracts/hb/compute/v1/machines_pb";
import { type CommandGroup, client, command, plain } from "./common.ts";

export interface DemoAccount {
  customerId: string;
  ownerPersonId: string;
  memberPersonId: string;
  keys: { label: string; key: string; scopes: string[]; personId: string }[];
  /** The earlier demo keys this run revoked (their secrets stop working), so a caller can say so. */
  revokedKeys: { id: string; label: string; display: string; personId: string }[];
  /** Working demo sign-ins of the client portal and the admin panel. */
  signIns: DemoSignIn[];
  /**
   * The demo account is an active reseller partner: a key with the account scope and a fresh
   * signing secret (rotated on every seed, as the keys are), enough for `hb webhooks listen`.
   */
  reseller: { key: string; signingSecret: string };
}

export interface DemoSignIn {
  area: "portal" | "admin";
  who: string;
  email: string;
  password: string;
}

/**
 * Demo passwords, set afresh on each seed through a one-time link, the way a new person sets
 * theirs. They exist only in development data: a deployment's first staff member is created with
 * `npm run admin -- staff create`, which prints a link instead.
 */
const DEMO_SIGN_INS: Array<DemoSignIn & { name?: string; permissions?: string[] }> = [
  { area: "portal", who: "account owner", email: "demo@example.com", password: "demo-owner-password" },
  { area: "portal", who: "team member", email: "tess@example.com", password: "demo-member-password" },
  {
    area: "admin",
    who: "staff, view + edit clients",
    name: "Ada Admin",
    email: "admin@example.com",
    password: "demo-admin-password",
    permissions: ["view_clients", "edit_clients"],
  },
  {
    area: "admin",
    who: "staff, view clients only",
    name: "Victor Viewer",
    email: "viewer@example.com",
    password: "demo-viewer-password",
    permissions: ["view_clients"],
  },
];

async function seedSignIns(ownerId: string, memberId: string): Promise<DemoSignIn[]> {
  const auth = client([AuthService, AuthStaffService], "AUTH_ADDR", "127.0.0.1:50051");
  const portal = client([PortalService], "AUTH_ADDR", "127.0.0.1:50051");
  const out: DemoSignIn[] = [];
  for (const d of DEMO_SIGN_INS) {
    let subjectId = d.email === "demo@example.com" ? ownerId : memberId;
    if (d.area === "admin") {
      const { staff } = await auth.createStaff({
        name: d.name ?? d.who,
        email: d.email,
        permissions: d.permissions ?? [],
      });
      subjectId = staff!.id;
    }
    const realm = d.area === "admin" ? Realm.ADMIN : Realm.PORTAL;
    // A person's password is set once (a link is refused to a person who has one): an earlier
    // seed set this one, and nothing can have changed it since.
    const kept =
      realm === Realm.PORTAL && (await auth.getPerson({ personId: subjectId })).person?.hasPassword;
    if (!kept) {
      const { token } = await portal.createPasswordLink({ realm, subjectId });
      await portal.setPassword({ token, password: d.password });
    }
    out.push({ area: d.area, who: d.who, email: d.email, password: d.password });
  }
  return out;
}

/**
 * Seeds demo data idempotently: one shared account with an owner and a team member, and keys of
 * several scope sets. Keys cannot be shown twice, so each run revokes the previous demo keys (only
 * those labelled "demo: …"; it reports which) and issues fresh ones to print. Not revoking would
 * leave secrets nobody can see piling up towards the per-person key limit.
 */
export async function seedDemo(): Promise<DemoAccount> {
  const auth = client([AuthService, AuthStaffService], "AUTH_ADDR", "127.0.0.1:50051");
  const email = "demo@example.com";
  let customer = (await auth.listCustomers({ email })).customers[0];
  if (!customer) {
    customer = (
      await auth.createCustomer({
        name: "Dana Demo",
        email,
        company: "Demo Hosting Ltd",
        country: "DE",
        currency: "EUR",
      })
    ).customer!;
  }
  const { people } = await auth.getCustomer({ customerId: customer.id });
  let member = people.find((p) => p.email === "tess@example.com");
  member ??= (
    await auth.createPerson({
      customerId: customer.id,
      name: "Tess Team",
      email: "tess@example.com",
      permissions: ["view_services", "power_services"],
    })
  ).person!;
  const ownerId = customer.ownerPersonId;

  const revokedKeys: DemoAccount["revokedKeys"] = [];
  for (const personId of [ownerId, member.id]) {
    for (const k of (await auth.listKeys({ personId })).keys) {
      if (k.label.startsWith("demo:") && k.status !== ApiKeyStatus.REVOKED) {
        await auth.revokeKey({ personId, keyId: k.id });
        revokedKeys.push({ id: k.id, label: k.label, display: k.display, personId });
      }
    }
  }
  // Before the keys: the account scope is for partners.
  const signingSecret = await demoPartnerSecret(auth, customer.id);
  const wanted = [
    {
      personId: ownerId,
      label: "demo: full access",
      scopes: ["services", "orders", "billing", "destructive"],
    },
    { personId: ownerId, label: "demo: read only", scopes: [] },
    { personId: member.id, label: "demo: team member power", scopes: ["services"] },
    { personId: ownerId, label: "demo: reseller", scopes: ["account"] },
  ];
  const keys: DemoAccount["keys"] = [];
  for (const w of wanted) {
    const r = await auth.createKey({
      personId: w.personId,
      label: w.label,
      scopes: w.scopes,
      ipAllowlist: "",
    });
    keys.push({ label: w.label, key: r.secretKey, scopes: r.key!.scopes, personId: w.personId });
  }
  const reseller = { key: keys[keys.length - 1].key, signingSecret };
  await seedBilling({ customerId: customer.id, ownerPersonId: ownerId });
  for (const hook of seedHooks)
    await hook({ customerId: customer.id, ownerPersonId: ownerId, memberPersonId: member.id });
  const signIns = await seedSignIns(ownerId, member.id);
  return {
    customerId: customer.id,
    ownerPersonId: ownerId,
    memberPersonId: member.id,
    keys,
    revokedKeys,
    signIns,
    reseller,
  };
}

/**
 * Makes the demo account an active reseller partner the first time, and returns a signing secret
 * to print: new with the profile, else rotated (a secret is shown once, so each seed issues one).
 */
async function demoPartnerSecret(
  auth: ReturnType<typeof client<[typeof AuthService, typeof AuthStaffService]>>,
  customerId: string,
): Promise<string> {
  try {
    return (await auth.createPartner({ customerId, status: PartnerStatus.ACTIVE })).signingSecret;
  } catch {
    // The profile exists already (CONFLICT): a new secret for it, and active again for the demo.
    await auth.setPartnerStatus({ customerId, status: PartnerStatus.ACTIVE });
    return (await auth.rotatePartnerSecret({ customerId })).signingSecret;
  }
}

/** Other services' demo data (machines, catalogue, credit) hook in here. */
const seedHooks: Array<
  (demo: { customerId: string; ownerPersonId: string; memberPersonId: string }) => Promise<void>
> = [];

export const seedCommands: CommandGroup = {
  title: "Demo data",
  commands: {
    seed: command({
      summary:
        "Demo account, team member and fresh demo keys; safe to repeat. Revokes the earlier demo keys (listed in revokedKeys)",
      run: async () => plain(await seedDemo()),
    }),
  },
};

const DEMO_PRODUCTS: Array<{
  name: string;
  kind: ProductKind;
  /** EUR per cycle. */
  prices: Array<[BillingCycle, string]>;
  vcpus: number;
  memoryMb: number;
  diskGb: number;
  location: string;
  osImages: string[];
}> = [
  {
    name: "VPS Small",
    kind: ProductKind.VPS,
    prices: [
      [BillingCycle.MONTHLY, "5.0000"],
      [BillingCycle.QUARTERLY, "14.5000"],
      [BillingCycle.ANNUALLY, "55.0000"],
    ],
    vcpus: 1,
    memoryMb: 2048,
    diskGb: 40,
    location: "fra1",
    osImages: ["ubuntu-24.04", "debian-12", "rocky-9"],
  },
  {
    name: "VPS Medium",
    kind: ProductKind.VPS,
    prices: [
      [BillingCycle.MONTHLY, "12.0000"],
      [BillingCycle.ANNUALLY, "130.0000"],
    ],
    vcpus: 2,
    memoryMb: 4096,
    diskGb: 80,
    location: "fra1",
    osImages: ["ubuntu-24.04", "debian-12"],
  },
  {
    name: "Dedicated E3",
    kind: ProductKind.DEDICATED,
    prices: [[BillingCycle.MONTHLY, "79.0000"]],
    vcpus: 8,
    memoryMb: 32768,
    diskGb: 960,
    location: "ams1",
    osImages: ["ubuntu-24.04", "debian-12"],
  },
  {
    name: "Game Server",
    kind: ProductKind.GAME,
    prices: [[BillingCycle.MONTHLY, "12.0000"]],
    vcpus: 2,
    memoryMb: 4096,
    diskGb: 30,
    location: "fra1",
    osImages: [],
  },
];

/** The catalogue once, and 500 EUR of credit for the demo owner the first time. */
async function seedBilling(demo: { customerId: string; ownerPersonId: string }) {
  const billing = client([BillingService, BillingStaffService], "BILLING_ADDR", "127.0.0.1:50053");
  const existing = (await billing.listProducts({})).products;
  const eur = (amount: string) => ({ currency: "EUR", amount });
  for (const p of DEMO_PRODUCTS) {
    if (existing.some((e) => e.name === p.name)) continue;
    const created = (
      await billing.adminCreateProduct({
        ...p,
        prices: p.prices.map(([cycle, amount]) => ({ cycle, price: eur(amount) })),
        currency: "EUR",
      })
    ).product!;
    if (p.kind === ProductKind.VPS) {
      await billing.adminAddProductOption({
        productId: created.id,
        name: "Extra IPv4 address",
        recurringMonthlyPrice: eur("2.0000"),
      });
      await billing.adminAddProductOption({
        productId: created.id,
        name: "Daily backups",
        recurringMonthlyPrice: eur("1.5000"),
      });
      await billing.adminAddProductOption({
        productId: created.id,
        name: "Setup assistance",
        oneTimePrice: eur("25.0000"),
      });
    }
  }
  const account = await billing.getAccount({
    caller: { customerId: demo.customerId, personId: demo.ownerPersonId },
  });
  await seedMachines(billing, demo);
  if (Number(account.balance?.amount ?? "0") === 0) {
    await billing.adminAdjustCredit({
      personId: demo.ownerPersonId,
      customerId: demo.customerId,
      amount: "500",
      currency: "EUR",
      description: "Demo credit",
    });
  }
}

/** Machines in several states, the first time: running, stopped, a failed build, a dedicated server. */
async function seedMachines(
  billing: ReturnType<typeof client<[typeof BillingService, typeof BillingStaffService]>>,
  demo: { customerId: string; ownerPersonId: string },
) {
  const caller = { customerId: demo.customerId, personId: demo.ownerPersonId };
  if ((await billing.listServiceSummaries({ caller })).total > 0) return;
  const compute = client([ComputeStaffService], "COMPUTE_ADDR", "127.0.0.1:50052");
  const machines = [
    {
      kind: ProductKind.VPS,
      machineKind: MachineKind.VPS,
      hostname: "web-1.demo",
      state: InstanceState.RUNNING,
    },
    {
      kind: ProductKind.VPS,
      machineKind: MachineKind.VPS,
      hostname: "db-1.demo",
      state: InstanceState.STOPPED,
    },
    {
      kind: ProductKind.VPS,
      machineKind: MachineKind.VPS,
      hostname: "broken-1.demo",
      // A build that failed: no instance in compute, and billing says so (not active with power on).
      state: InstanceState.ERROR,
      status: ServiceStatus.PROVISIONING_FAILED,
    },
    {
      kind: ProductKind.DEDICATED,
      machineKind: MachineKind.DEDICATED,
      hostname: "metal-1.demo",
      state: InstanceState.RUNNING,
    },
    {
      kind: ProductKind.GAME,
      machineKind: MachineKind.GAME,
      hostname: "mc-1.demo",
      state: InstanceState.RUNNING,
    },
  ];
  for (const m of machines) {
    const { service } = await billing.adminCreateService({
      customerId: demo.customerId,
      kind: m.kind,
      hostname: m.hostname,
      status: "status" in m ? m.status : ServiceStatus.ACTIVE,
    });
    await compute.adminCreateMachine({
      serviceId: service!.id,
      customerId: demo.customerId,
      kind: m.machineKind,
      hostname: m.hostname,
      state: m.state,
    });
  }
}
