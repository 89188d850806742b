/**
 * Set-up shared by `npm run bench` and `npm run soak`: clients holding the admin command's
 * certificate (internal calls are mutual TLS), and customers whose owner has a key and credit.
 */
import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { AuthStaffService } from "@hb/contracts/hb/auth/v1/auth_staff_pb";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";
import { backendClient, loadTlsIdentity } from "@hb/platform";
import type autocannon from "autocannon";
import { certFiles } from "../cert-files.ts";

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
