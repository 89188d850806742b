/** The bench's money part (scripts/bench.ts): orders settled from credit, invoice pays, the ledger's check. */
import { BillingCycle, ProductKind } from "@hb/contracts/hb/billing/v1/common_pb";
import postgres from "postgres";
import { serviceDbUrl } from "../db-roles.ts";
import type { Stack } from "../stack.ts";
import { measure, type Result } from "./measure.ts";
import { adminClients, fundedCustomer, orderRequests, payRequests } from "./seed.ts";

/** The money lines of "Against the targets": orders ≥ 600/s; pays ≥ 1,500/s with p99 ≤ 100 ms. */
export function moneyTargets(money: Result[]): string {
  const order = money.find((r) => r.name.includes("orders"));
  const pay = money.find((r) => r.name.includes("pay"));
  if (!order || !pay) return "- Money: not measured in this run.";
  const met = (ok: boolean) => (ok ? "met" : "not met");
  return [
    `- Orders settled from credit ≥ 600/s: **${order.rps.toLocaleString("en")}/s** (${met(order.rps >= 600)}).`,
    `- Invoice pays ≥ 1,500/s with p99 ≤ 100 ms: **${pay.rps.toLocaleString("en")}/s, p99 ${pay.p99} ms** (${met(pay.rps >= 1500 && pay.p99 <= 100)}).`,
  ].join("\n");
}

/** Orders settled from credit and invoice payments through the gateway, then the ledger's sum check. */
export async function moneyBench(
  stack: Stack,
  env: Record<string, string>,
  pids: Record<string, number>,
  allPids: Record<string, number>,
): Promise<{ results: Result[]; ledgerCheck: string }> {
  const clients = adminClients(env);
  const { auth, billing } = clients;
  const product = (
    await billing.client.adminCreateProduct({
      name: "Bench order",
      kind: ProductKind.GAME,
      prices: [{ cycle: BillingCycle.MONTHLY, price: { currency: "EUR", amount: "1" } }],
      currency: "EUR",
    })
  ).product!;
  // Orders have a cool-down of 30 per 15 minutes per person: spread the load over many people.
  const people: { key: string; personId: string; customerId: string }[] = [];
  for (let i = 0; i < 150; i++) {
    people.push(
      await fundedCustomer(clients, {
        name: `B${i}`,
        email: `b${i}@bench.test`,
        label: "b",
        scopes: ["orders", "billing"],
      }),
    );
  }
  auth.close();
  billing.close();
  const out: Result[] = [];
  out.push(
    await measure(
      "POST /api/v1/orders settled from credit",
      `${stack.gatewayUrl}/api/v1/orders`,
      {},
      allPids,
      {
        requests: orderRequests(people, product.id),
      },
      false,
    ),
  );
  // Unpaid invoices to pay, made directly in billing's tables as billing's role.
  const sql = postgres(serviceDbUrl(env.DATABASE_URL, "billing"), { max: 1, onnotice: () => {} });
  const invoices = await sql<{ id: string; customer_id: string }[]>`
    insert into billing.documents (id, kind, number, customer_id, person_id, total, currency, purpose)
    select gen_random_uuid(), 'invoice', 'INV-BENCH-' || gen_random_uuid(), c.customer_id, c.person_id, 1, 'EUR', 'manual'
    from generate_series(1, 200) g cross join (select distinct person_id, customer_id from billing.balances where balance > 100000) c
    returning id, customer_id`;
  const keyOf = new Map(people.map((p) => [p.customerId, p.key]));
  out.push(
    await measure(
      "POST /api/v1/invoices/{id}/pay from credit",
      `${stack.gatewayUrl}/api/v1/`,
      {},
      { ...pids, billing: allPids.billing },
      {
        requests: payRequests(invoices, keyOf),
      },
      false,
    ),
  );
  const [check] = await sql<{ people: number; mismatched: number; orders: number; paid: number }[]>`
    select (select count(*)::int from billing.balances) as people,
           (select count(*)::int from billing.balances b
             where b.balance <> coalesce((select sum(amount) from billing.ledger l where l.person_id = b.person_id), 0)) as mismatched,
           (select count(*)::int from billing.orders) as orders,
           (select count(*)::int from billing.documents where number like 'INV-BENCH-%' and status = 'paid') as paid`;
  const [double] = await sql<{ n: number }[]>`
    select count(*)::int as n from (select document_id from billing.ledger where kind = 'payment' and document_id is not null
      group by document_id having count(*) > 1) d`;
  const ledgerCheck = `Ledger check after the run: ${check.orders.toLocaleString("en")} orders and ${check.paid.toLocaleString("en")} bench invoices paid; ${check.mismatched} of ${check.people} balances differ from the sum of their ledger entries; ${double.n} documents were charged more than once. (Requests answered 409 in the pay row are repeat pays of an already paid invoice once the pre-made invoices ran out, or 429 cool-downs; they move no money.)`;
  process.stdout.write(`${ledgerCheck}\n`);
  await sql.end();
  return { results: out, ledgerCheck };
}
