/**
 * What the invariant test runs against: one private stack (its gateway, its database read-only,
 * the admin gRPC clients) with a catalogue made once, and for each generated run a fresh cast of
 * actors (new customers, so cool-downs, balances and checks start clean every run).
 */
import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { AuthStaffService } from "@hb/contracts/hb/auth/v1/auth_staff_pb";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { BillingDeskService } from "@hb/contracts/hb/billing/v1/billing_desk_pb";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";
import { BillingCycle, ProductKind } from "@hb/contracts/hb/billing/v1/common_pb";
import { TopUpService, TopUpStaffService } from "@hb/contracts/hb/billing/v1/payments_pb";
import postgres from "postgres";
import { stackClient } from "../support/clients.ts";
import type { StripeStandIn } from "../support/stripe-stand-in.ts";
import { clockAdminOf, type Http, http, ModelClock } from "./driver.ts";
import { type Units, units } from "./money.ts";

/** The private stack's settings: clock control on, fast provisioning. */
export const STACK_ENV = {
  BILLING_CLOCK_CONTROL: "true",
  SIM_BUILD_MS: "50",
  SIM_ACTION_MS: "50",
  PROVISIONER_INTERVAL_MS: "50",
  HOURLY_CHARGE_INTERVAL_MS: "200",
  LOG_LEVEL: "warn",
};

export interface OptionDef {
  id: string;
  name: string;
  /** Per month, for a recurring add-on. */
  recurring?: Units;
  oneTime?: Units;
}

export interface ProductDef {
  id: string;
  label: string;
  currency: string;
  prices: Record<string, Units>;
  options: OptionDef[];
}

export interface World {
  gatewayUrl: string;
  http: Http;
  sql: postgres.Sql;
  auth: ReturnType<typeof stackClient<[typeof AuthService, typeof AuthStaffService]>>["client"];
  billing: ReturnType<typeof stackClient<[typeof BillingService, typeof BillingStaffService]>>["client"];
  clock: ModelClock;
  products: ProductDef[];
  /** Whether billing's ledger has a currency column (newer schema). */
  ledgerCurrency: boolean;
  /** Top-ups: the portal's calls (as the pages' identity) and staff's. */
  topUps: ReturnType<typeof stackClient<[typeof TopUpService]>>["client"];
  topUpStaff: ReturnType<typeof stackClient<[typeof TopUpStaffService]>>["client"];
  /** The support desk's money writes, as the admin command calls them (recorded as itself). */
  desk: ReturnType<typeof stackClient<[typeof BillingDeskService]>>["client"];
  /** The Stripe stand-in billing was started against; without it card top-ups are skipped. */
  stripe?: StripeStandIn;
  close(): Promise<void>;
}

export interface Person {
  label: string;
  personId: string;
  customerId: string;
  currency: string;
  key: string;
}

export interface Actors {
  /** owner, member of customer 0; owner, member of customer 1; … */
  people: Person[];
  customers: { customerId: string; currency: string }[];
  partner: Person & { secret: string };
}

const CATALOGUE: {
  label: string;
  currency: string;
  prices: Record<string, string>;
  minCredit?: string;
  options: boolean;
}[] = [
  { label: "eur-small", currency: "EUR", prices: { monthly: "10", annually: "100" }, options: true },
  { label: "eur-mid", currency: "EUR", prices: { monthly: "15", annually: "150" }, options: true },
  { label: "eur-large", currency: "EUR", prices: { monthly: "25", annually: "250" }, options: true },
  { label: "usd-small", currency: "USD", prices: { monthly: "12", annually: "120" }, options: true },
  { label: "usd-large", currency: "USD", prices: { monthly: "30", annually: "300" }, options: true },
  { label: "eur-hourly", currency: "EUR", prices: { hourly: "0.05" }, minCredit: "1", options: false },
];

const OPTIONS = [
  { name: "Extra IPv4", recurring: "2" },
  { name: "Backups", recurring: "3.5", oneTime: "5" },
  { name: "Setup", oneTime: "20" },
];

export async function openWorld(
  env: Record<string, string>,
  gatewayUrl: string,
  stripe?: StripeStandIn,
): Promise<World> {
  const authH = stackClient(env, [AuthService, AuthStaffService], "AUTH_ADDR", 20_000);
  const topUpsH = stackClient(env, [TopUpService], "BILLING_ADDR", 20_000, "portal");
  const topUpStaffH = stackClient(env, [TopUpStaffService], "BILLING_ADDR", 20_000);
  const deskH = stackClient(env, [BillingDeskService], "BILLING_ADDR", 20_000);
  const billingH = stackClient(env, [BillingService, BillingStaffService], "BILLING_ADDR", 20_000);
  // Moving the clock runs the work that falls due (every hour of every hourly service): slow.
  const clockH = stackClient(env, [BillingStaffService], "BILLING_ADDR", 180_000);
  // Read-only: the test observes billing's tables and never edits them.
  const sql = postgres(env.DATABASE_URL, {
    max: 2,
    onnotice: () => {},
    connection: { default_transaction_read_only: true, search_path: "billing" },
  });
  const products: ProductDef[] = [];
  for (const c of CATALOGUE) {
    const r = await billingH.client.adminCreateProduct({
      name: `inv ${c.label}`,
      kind: ProductKind.VPS,
      prices: Object.entries(c.prices).map(([cycle, amount]) => ({
        cycle: BillingCycle[cycle.toUpperCase() as keyof typeof BillingCycle],
        price: { currency: c.currency, amount },
      })),
      vcpus: 1,
      memoryMb: 1024,
      diskGb: 20,
      location: "fra1",
      osImages: ["debian-12"],
      currency: c.currency,
      minimumCredit: c.minCredit ? { currency: c.currency, amount: c.minCredit } : undefined,
    });
    const id = r.product!.id;
    const options: OptionDef[] = [];
    if (c.options) {
      for (const o of OPTIONS) {
        const made = await billingH.client.adminAddProductOption({
          productId: id,
          name: o.name,
          recurringMonthlyPrice: o.recurring ? { currency: c.currency, amount: o.recurring } : undefined,
          oneTimePrice: o.oneTime ? { currency: c.currency, amount: o.oneTime } : undefined,
        });
        options.push({
          id: made.option!.id,
          name: o.name,
          recurring: o.recurring ? units(o.recurring) : undefined,
          oneTime: o.oneTime ? units(o.oneTime) : undefined,
        });
      }
    }
    products.push({
      id,
      label: c.label,
      currency: c.currency,
      prices: Object.fromEntries(Object.entries(c.prices).map(([k, v]) => [k, units(v)])),
      options,
    });
  }
  const [col] = await sql<{ n: number }[]>`
    select count(*)::int as n from information_schema.columns
    where table_schema = 'billing' and table_name = 'ledger' and column_name = 'currency'`;
  return {
    gatewayUrl,
    http: http(gatewayUrl),
    sql,
    auth: authH.client,
    billing: billingH.client,
    clock: new ModelClock(clockAdminOf(clockH.client)),
    products,
    ledgerCurrency: col.n > 0,
    topUps: topUpsH.client,
    topUpStaff: topUpStaffH.client,
    desk: deskH.client,
    stripe,
    close: async () => {
      topUpsH.close();
      topUpStaffH.close();
      deskH.close();
      authH.close();
      billingH.close();
      clockH.close();
      await sql.end({ timeout: 5 });
    },
  };
}

let serial = 0;

const MEMBER_PERMISSIONS = [
  "view_services",
  "view_invoices",
  "manage_services",
  "pay_invoices",
  "cancel_services",
];

/** A fresh cast: EUR, USD and EUR customers (owner + limited member each) and a reseller partner. */
export async function newActors(w: World): Promise<Actors> {
  const run = `${process.pid}-${Date.now().toString(36)}-${++serial}`;
  const key = async (personId: string, scopes: string[]) =>
    (await w.auth.createKey({ personId, label: "inv", scopes, ipAllowlist: "" })).secretKey;
  const people: Person[] = [];
  const customers: Actors["customers"] = [];
  for (const [i, currency] of ["EUR", "USD", "EUR"].entries()) {
    const { customer, owner } = await w.auth.createCustomer({
      name: `Inv ${i}`,
      email: `inv-${run}-${i}@example.test`,
      company: "Inv Co",
      country: "DE",
      currency,
    });
    const customerId = customer!.id;
    customers.push({ customerId, currency });
    people.push({
      label: `owner${i}`,
      personId: owner!.id,
      customerId,
      currency,
      key: await key(owner!.id, ["services", "orders", "billing", "destructive"]),
    });
    const { person } = await w.auth.createPerson({
      customerId,
      name: `Member ${i}`,
      email: `inv-${run}-${i}-m@example.test`,
      permissions: MEMBER_PERMISSIONS,
    });
    people.push({
      label: `member${i}`,
      personId: person!.id,
      customerId,
      currency,
      key: await key(person!.id, ["read", "services", "orders", "billing", "destructive"]),
    });
  }
  const { customer, owner } = await w.auth.createCustomer({
    name: "Inv Partner",
    email: `inv-${run}-p@example.test`,
    company: "Reseller Co",
    country: "DE",
    currency: "EUR",
  });
  const { signingSecret } = await w.auth.createPartner({
    customerId: customer!.id,
    status: PartnerStatus.ACTIVE,
  });
  const partner = {
    label: "partner",
    personId: owner!.id,
    customerId: customer!.id,
    currency: "EUR",
    key: await key(owner!.id, ["account", "orders", "billing"]),
    secret: signingSecret,
  };
  customers.push({ customerId: partner.customerId, currency: "EUR" });
  return { people, customers, partner };
}
