/**
 * Set-up shared by `npm run bench` and `npm run soak`: clients holding the admin command's
 * certificate (internal calls are mutual TLS), and customers whose owner has a key and credit.
 */
import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { AuthStaffService } from "@hb/contracts/hb/auth/v1/auth_staff_pb";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";
import { BillingCycle, ProductKind } from "@hb/contracts/hb/billing/v1/common_pb";
import { backendClient, connectDb, loadTlsIdentity } from "@hb/platform";
import type autocannon from "autocannon";
import postgres from "postgres";
import { recordEveryService } from "../../services/billing/src/service-records.ts";
import { certFiles } from "../cert-files.ts";
import { serviceDbUrl } from "../db-roles.ts";

export const adminIdentity = (env: Record<string, string>) =>
  loadTlsIdentity(certFiles(env.HB_CERTS_DIR, "admin"));

/** Auth's and billing's definitions as the admin surface calls them. */
export function adminClients(env: Record<string, string>) {
  const tls = adminIdentity(env);
  return {
    auth: backendClient("grpc-js", [AuthService, AuthStaffService], env.AUTH_ADDR, {
      timeoutMs: 10_000,
      tls,
    }),
    billing: backendClient("grpc-js", [BillingService, BillingStaffService], env.BILLING_ADDR, {
      timeoutMs: 10_000,
      tls,
    }),
  };
}

type Clients = ReturnType<typeof adminClients>;

/** A new customer in EUR whose owner holds a key with `scopes` and 1,000,000 of credit. */
export async function fundedCustomer(
  { auth, billing }: Clients,
  who: { name: string; email: string; scopes: string[]; label: string },
): Promise<{ key: string; personId: string; customerId: string }> {
  const { customer, owner } = await auth.client.createCustomer({
    name: who.name,
    email: who.email,
    currency: "EUR",
  });
  const { secretKey } = await auth.client.createKey({
    personId: owner!.id,
    label: who.label,
    scopes: who.scopes,
    ipAllowlist: "",
  });
  await billing.client.adminAdjustCredit({
    personId: owner!.id,
    customerId: customer!.id,
    amount: "1000000",
    currency: "EUR",
  });
  return { key: secretKey, personId: owner!.id, customerId: customer!.id };
}

/**
 * `fundedCustomer` on a stack whose hourly request limit is lifted (a benchmark's load reaches the
 * default in seconds), with the admin clients closed again.
 */
export async function loadCustomer(
  env: Record<string, string>,
  who: Parameters<typeof fundedCustomer>[1],
): Promise<Awaited<ReturnType<typeof fundedCustomer>>> {
  const clients = adminClients(env);
  try {
    await clients.auth.client.updateSettings({ hourlyRequestLimit: 1_000_000 });
    return await fundedCustomer(clients, who);
  } finally {
    clients.auth.close();
    clients.billing.close();
  }
}

/**
 * autocannon requests placing a monthly order of `productId`, each from the next of `people` in
 * turn (an order has a cool-down of 30 per 15 minutes per person, so the load is spread).
 */
export function orderRequests(people: { key: string }[], productId: string): autocannon.Request[] {
  const body = JSON.stringify({ productId, billingCycle: "monthly" });
  let n = 0;
  return [
    {
      method: "POST",
      setupRequest: (req: autocannon.Request) => ({
        ...req,
        body,
        headers: {
          ...req.headers,
          authorization: `Bearer ${people[n++ % people.length].key}`,
          "content-type": "application/json",
        },
      }),
    },
  ];
}

/**
 * autocannon requests paying `invoices` from credit one after another, each as its customer
 * (`keyOf`: customer id to API key), with `extra` headers made per request (an Idempotency-Key).
 */
export function payRequests(
  invoices: readonly { id: string; customer_id: string }[],
  keyOf: ReadonlyMap<string, string>,
  extra: () => Record<string, string> = () => ({}),
): autocannon.Request[] {
  let k = 0;
  return [
    {
      method: "POST",
      setupRequest: (req: autocannon.Request) => {
        const inv = invoices[k++ % invoices.length];
        return {
          ...req,
          path: `/api/v1/invoices/${inv.id}/pay`,
          body: "{}",
          headers: { ...req.headers, authorization: `Bearer ${keyOf.get(inv.customer_id)}`, ...extra() },
        };
      },
    },
  ];
}

/** Bulk-creates `n` running VPS (billing services + compute machines) for one customer. */
export async function seedVps(env: Record<string, string>, customerId: string, n: number) {
  const billing = backendClient("grpc-js", [BillingService, BillingStaffService], env.BILLING_ADDR, {
    timeoutMs: 10_000,
    tls: adminIdentity(env),
  });
  const product = (
    await billing.client.adminCreateProduct({
      name: `Bench VPS ${n}`,
      kind: ProductKind.VPS,
      prices: [{ cycle: BillingCycle.MONTHLY, price: { currency: "EUR", amount: "5" } }],
      currency: "EUR",
    })
  ).product!;
  billing.close();
  // Thousands of rows at once, each schema written by its own service's role (no RPC creates
  // them in bulk): billing's services first, then compute's machines for the same ids.
  const billingSql = postgres(serviceDbUrl(env.DATABASE_URL, "billing"), { max: 1, onnotice: () => {} });
  const computeSql = postgres(serviceDbUrl(env.DATABASE_URL, "compute"), { max: 1, onnotice: () => {} });
  try {
    const services = await billingSql<{ id: string }[]>`
      insert into billing.services (id, customer_id, product_id, kind, name, hostname, status, cycle, amount, currency, next_due_date)
      select gen_random_uuid(), ${customerId}, ${product.id}, 'vps', 'Bench VPS', 'vps-' || g, 'active', 'monthly', 5, 'EUR', now() + interval '1 month'
      from generate_series(1, ${n}) g returning id`;
    await computeSql`
      insert into compute.machines (service_id, customer_id, kind, hostname, state, has_instance, os)
      select id, ${customerId}, 'vps', 'vps', 'running', true, 'debian-12' from unnest(${services.map((r) => r.id)}::uuid[]) as id`;
    await computeSql`insert into compute.ip_addresses (service_id, address, version, prefix_length, purpose)
      select service_id, '203.0.113.' || (1 + (abs(hashtext(service_id::text)) % 250)), 4, 24, 'primary' from compute.machines
      where customer_id = ${customerId} on conflict do nothing`;
    // Written around billing's code, so their records reach compute's copy (the VPS pages' source)
    // the way a first deployment fills it: every service's record through billing's outbox.
    const recorder = connectDb(serviceDbUrl(env.DATABASE_URL, "billing"), "billing", 1);
    await recordEveryService(recorder, env.HB_NS).finally(() => recorder.end());
    const [{ n: expected }] = await billingSql<{ n: number }[]>`
      select count(*)::int as n from billing.services where customer_id = ${customerId}`;
    const deadline = Date.now() + 120_000;
    for (;;) {
      const [{ n }] = await computeSql<{ n: number }[]>`
        select count(*)::int as n from compute.service_records where customer_id = ${customerId}`;
      if (n >= expected) break;
      if (Date.now() > deadline) throw new Error(`compute holds ${n} of ${expected} service records`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // As autovacuum would have done by the time a customer has thousands of machines.
    await billingSql.unsafe("vacuum analyze billing.services").simple();
    for (const table of ["compute.machines", "compute.ip_addresses", "compute.service_records"]) {
      await computeSql.unsafe(`vacuum analyze ${table}`).simple();
    }
  } finally {
    await billingSql.end();
    await computeSql.end();
  }
}
