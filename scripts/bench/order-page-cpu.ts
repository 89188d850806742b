/**
 * `node scripts/bench/order-page-cpu.ts`: the CPU each process spends per view of a portal order's
 * page (GET /portal/orders/{id}) for an order of SERVICES services (default 10), each with one
 * add-on, on one fresh stack: 10 connections, SECONDS (default 5) after a 1 s warm-up. Prints
 * billing's calls per view too (from its metrics). Compare builds by running it on each, in turn.
 */
import { PortalService, Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import { BillingCycle, ProductKind } from "@hb/contracts/hb/billing/v1/common_pb";
import { backendClient } from "@hb/platform";
import autocannon from "autocannon";
import { cpuTicks, localDependencies, withScratchStack } from "./scratch-stack.ts";
import { adminClients, adminIdentity, fundedCustomer } from "./seed.ts";

const SERVICES = Number(process.env.SERVICES ?? 10);
const SECONDS = Number(process.env.SECONDS ?? 5);
const PASSWORD = "a-long-bench-password";

/** RPCs billing has answered, summed over methods (health checks apart). */
async function billingCalls(env: Record<string, string>): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${env.BILLING_METRICS_PORT}/metrics`)).text();
  let n = 0;
  for (const l of text.split("\n")) {
    if (l.startsWith("rpc_server_handled_total{") && !l.includes("grpc.health"))
      n += Number(l.split(" ").at(-1));
  }
  return n;
}

await localDependencies();
await withScratchStack("orderpage", async (stack, env) => {
  const clients = adminClients(env);
  await clients.auth.client.updateSettings({ hourlyRequestLimit: 1_000_000 });
  const who = await fundedCustomer(clients, {
    name: "Order page",
    email: "order-page@bench.test",
    label: "order-page",
    scopes: ["read", "orders", "billing"],
  });
  const { product } = await clients.billing.client.adminCreateProduct({
    name: "Page plan",
    kind: ProductKind.VPS,
    prices: [{ cycle: BillingCycle.MONTHLY, price: { amount: "10.0000", currency: "EUR" } }],
    currency: "EUR",
    osImages: ["debian-12"],
  });
  const { option } = await clients.billing.client.adminAddProductOption({
    productId: product!.id,
    name: "Extra IP",
    recurringMonthlyPrice: { amount: "2.0000", currency: "EUR" },
  });
  const placed = await fetch(`${stack.gatewayUrl}/api/v1/orders`, {
    method: "POST",
    headers: { authorization: `Bearer ${who.key}`, "content-type": "application/json" },
    body: JSON.stringify({
      items: Array.from({ length: SERVICES }, (_, n) => ({
        productId: product!.id,
        billingCycle: "monthly",
        hostname: `page-${n}`,
        addons: [{ optionId: option!.id, billingType: "recurring" }],
      })),
    }),
  });
  const orderId = ((await placed.json()) as { data: { order: { id: string } } }).data.order.id;
  const portal = backendClient("grpc-js", [PortalService], env.AUTH_ADDR, {
    timeoutMs: 10_000,
    tls: adminIdentity(env),
  });
  const { token } = await portal.client.createPasswordLink({ realm: Realm.PORTAL, subjectId: who.personId });
  await portal.client.setPassword({ token, password: PASSWORD });
  portal.close();
  clients.auth.close();
  clients.billing.close();
  // Signing in as a browser does: the form's token cookie, then the session cookie.
  const form = await fetch(`${stack.gatewayUrl}/portal/sign-in`);
  const formCookie = form.headers.getSetCookie()[0].split(";")[0];
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? "";
  const signIn = await fetch(`${stack.gatewayUrl}/portal/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie: formCookie, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: csrf, email: "order-page@bench.test", password: PASSWORD }),
  });
  const session = signIn.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .find((c) => c.startsWith("hb_portal_session="));
  if (!session) throw new Error(`sign-in answered ${signIn.status}`);
  const opts = { url: `${stack.gatewayUrl}/portal/orders/${orderId}`, headers: { cookie: session } };
  const pids = [...stack.procs].map(([name, p]) => [name, p.pid!] as const);
  await autocannon({ ...opts, connections: 10, duration: 1 });
  const [before, callsBefore] = [pids.map(([, pid]) => cpuTicks(pid)), await billingCalls(env)];
  const r = await autocannon({ ...opts, connections: 10, duration: SECONDS });
  const n = r.requests.total || 1;
  const calls = ((await billingCalls(env)) - callsBefore) / n;
  console.log(
    JSON.stringify({
      services: SERVICES,
      views: r.requests.total,
      rps: Math.round(r.requests.average),
      bad: r.non2xx + r.errors,
      billingCallsPerView: Math.round(calls * 100) / 100,
      // Clock ticks (1/100 s) per 10,000 views, i.e. µs per view.
      cpuMicrosPerView: pids
        .map(([name, pid], i) => `${name} ${Math.round(((cpuTicks(pid) - before[i]) * 10_000) / n)}`)
        .join(", "),
      load: (await import("node:os"))
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(" "),
    }),
  );
});
