/**
 * `node scripts/bench/flags-ab.ts "<flags A>" "<flags B>" [rounds]`: what a change of the services'
 * node flags (HB_SERVICE_NODE_ARGS) costs. Alternates A and B for `rounds` (default 2), each on a
 * fresh stack started twice (the first start fills the compile cache for those flags): keyed
 * GET /api/v1/ and orders settled from credit, 50 connections for 8 s after a 2 s warm-up, plus idle
 * RSS (MB = 10^6 bytes) 15 s after the stack answered, with the CPU each process spent per request.
 * With "--cpu-prof --cpu-prof-dir=<dir>" among the flags, each service writes a profile as it stops.
 */
import { BillingCycle, ProductKind } from "@hb/contracts/hb/billing/v1/common_pb";
import autocannon from "autocannon";
import postgres from "postgres";
import type { Stack } from "../stack.ts";
import {
  commandTicks,
  cpuTicks,
  localDependencies,
  machineBusyTicks,
  procBytes,
  withScratchStack,
} from "./scratch-stack.ts";
import { adminClients, fundedCustomer, orderRequests } from "./seed.ts";

const [flagsA, flagsB] = process.argv.slice(2, 4);
const ROUNDS = Number(process.argv[4] ?? 2);
if (flagsA === undefined || flagsB === undefined) {
  console.error('usage: node scripts/bench/flags-ab.ts "<flags A>" "<flags B>" [rounds]');
  process.exit(2);
}

const rssMB = (pid: number) => procBytes(pid, "VmRSS") / 1e6;

/** Transactions PostgreSQL has finished, every database together (a statement alone is one). */
async function pgCounters(databaseUrl: string) {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ xacts: string }[]>`
      select sum(xact_commit + xact_rollback)::text as xacts from pg_stat_database`;
    return { xacts: Number(row.xacts) };
  } finally {
    await sql.end();
  }
}

async function servicesBuilt(databaseUrl: string) {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const byStatus = async () =>
    Object.fromEntries(
      (
        await sql<{ status: string; n: number }[]>`
          select status, count(*)::int as n from billing.services group by status order by status`
      ).map((r) => [r.status, r.n]),
    );
  try {
    const atEnd = await byStatus();
    const started = Date.now();
    let now = atEnd;
    while (Object.keys(now).some((s) => s !== "active") && Date.now() - started < 120_000) {
      await new Promise((r) => setTimeout(r, 250));
      now = await byStatus();
    }
    return { atEnd, allActiveAfterSeconds: Number(((Date.now() - started) / 1000).toFixed(1)), now };
  } finally {
    await sql.end();
  }
}

async function load(
  stack: Stack,
  env: Record<string, string>,
  url: string,
  opts: Partial<autocannon.Options>,
) {
  await autocannon({ url, connections: 50, duration: 2, ...opts });
  const pids = [...stack.procs].map(([name, p]) => [name, p.pid!] as const);
  const before = pids.map(([, pid]) => cpuTicks(pid));
  const servers = ["postgres", "nats-server", "redis-server"].map(commandTicks);
  const machine = machineBusyTicks();
  const pg = await pgCounters(env.DATABASE_URL);
  const r = await autocannon({ url, connections: 50, duration: 8, ...opts });
  const total = r.requests.total || 1;
  const per = (ticks: number) => Math.round((ticks * 10_000) / total);
  const cpu = [
    ...pids.map(([name, pid], i) => `${name} ${per(cpuTicks(pid) - before[i])}`),
    ...["postgres", "nats-server", "redis-server"].map((c, i) => `${c} ${per(commandTicks(c) - servers[i])}`),
    `whole machine ${per(machineBusyTicks() - machine)}`,
  ];
  // Counted after the run, so some of the last requests' background work may still be to come.
  const pgXacts = ((await pgCounters(env.DATABASE_URL)).xacts - pg.xacts) / total;
  return {
    rps: Math.round(r.requests.average),
    p99: r.latency.p99,
    bad: r.non2xx + r.errors,
    cpu: cpu.join(", "),
    pgTransactionsPerRequest: Number(pgXacts.toFixed(1)),
  };
}

async function once(flags: string, measure: boolean) {
  await withScratchStack(
    "ab",
    async (stack, env) => {
      if (!measure) return;
      // The idle time is what is measured.
      await new Promise((r) => setTimeout(r, 15_000));
      const idle = [...stack.procs].map(([name, p]) => `${name} ${rssMB(p.pid!).toFixed(1)}`).join(", ");
      const clients = adminClients(env);
      await clients.auth.client.updateSettings({ hourlyRequestLimit: 1_000_000 });
      const product = (
        await clients.billing.client.adminCreateProduct({
          name: "AB order",
          kind: ProductKind.GAME,
          prices: [{ cycle: BillingCycle.MONTHLY, price: { currency: "EUR", amount: "1" } }],
          currency: "EUR",
        })
      ).product!;
      // Orders have a cool-down of 30 per 15 minutes per person: spread them over many people.
      const people: Awaited<ReturnType<typeof fundedCustomer>>[] = [];
      for (let i = 0; i < 150; i++)
        people.push(
          await fundedCustomer(clients, {
            name: `P${i}`,
            email: `p${i}@ab.test`,
            label: "ab",
            scopes: ["orders"],
          }),
        );
      clients.auth.close();
      clients.billing.close();
      // AB_ONLY=orders leaves the keyed load out (for a profile of the order path alone).
      const keyed =
        process.env.AB_ONLY === "orders"
          ? undefined
          : await load(stack, env, `${stack.gatewayUrl}/api/v1/`, {
              headers: { authorization: `Bearer ${people[0].key}` },
            });
      const orders = await load(stack, env, `${stack.gatewayUrl}/api/v1/orders`, {
        requests: orderRequests(people, product.id),
      });
      // How far building kept up with selling: the ordered services by status as the load ends,
      // and the seconds until the last one is built.
      const built = await servicesBuilt(env.DATABASE_URL);
      console.log(JSON.stringify({ flags, idle, keyed, orders, built }));
    },
    { HB_SERVICE_NODE_ARGS: flags },
  );
}

const deps = await localDependencies();
for (let round = 0; round < ROUNDS; round++) {
  for (const flags of [flagsA, flagsB]) {
    await once(flags, false);
    await once(flags, true);
  }
}
await deps.stop();
process.exit(0);
