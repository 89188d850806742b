/**
 * `node scripts/bench/flags-ab.ts "<flags A>" "<flags B>" [rounds]`: what a change of the services'
 * node flags (HB_SERVICE_NODE_ARGS) costs. Alternates A and B for `rounds` (default 2), each on a
 * fresh stack started twice (the first start fills the compile cache for those flags): keyed
 * GET /api/v1/ and orders settled from credit, 50 connections for 8 s after a 2 s warm-up, plus idle
 * RSS (MB = 10^6 bytes) 15 s after the stack answered, with the CPU each process spent per request.
 * With "--cpu-prof --cpu-prof-dir=<dir>" among the flags, each service writes a profile as it stops.
 */
import { readFileSync } from "node:fs";
import { BillingCycle, ProductKind } from "@hb/contracts/hb/billing/v1/common_pb";
import autocannon from "autocannon";
import { ensureDependencies } from "../deps.ts";
import { type Stack, stackEnv, startStack } from "../stack.ts";
import { adminClients, fundedCustomer } from "./seed.ts";

const [flagsA, flagsB] = process.argv.slice(2, 4);
const ROUNDS = Number(process.argv[4] ?? 2);
if (flagsA === undefined || flagsB === undefined) {
  console.error('usage: node scripts/bench/flags-ab.ts "<flags A>" "<flags B>" [rounds]');
  process.exit(2);
}

const ticks = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return Number(f[11]) + Number(f[12]);
};
const rssMB = (pid: number) => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return (Number(line?.split(/\s+/)[1] ?? 0) * 1024) / 1e6;
};

async function load(stack: Stack, url: string, opts: Partial<autocannon.Options>) {
  await autocannon({ url, connections: 50, duration: 2, ...opts });
  const pids = [...stack.procs].map(([name, p]) => [name, p.pid!] as const);
  const before = pids.map(([, pid]) => ticks(pid));
  const r = await autocannon({ url, connections: 50, duration: 8, ...opts });
  const total = r.requests.total || 1;
  const cpu = pids.map(
    ([name, pid], i) => `${name} ${Math.round(((ticks(pid) - before[i]) * 10_000) / total)}`,
  );
  return {
    rps: Math.round(r.requests.average),
    p99: r.latency.p99,
    bad: r.non2xx + r.errors,
    cpu: cpu.join(", "),
  };
}

async function once(flags: string, measure: boolean) {
  process.env.HB_SERVICE_NODE_ARGS = flags;
  const suffix = `ab${Date.now().toString(36)}`;
  const db = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
  db.pathname = `/hb_${suffix}`;
  const { env, gatewayPort } = await stackEnv({ databaseUrl: db.toString(), ns: suffix });
  const stack = await startStack({ env, output: "ignore", gatewayPort });
  try {
    if (!measure) return;
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
        : await load(stack, `${stack.gatewayUrl}/api/v1/`, {
            headers: { authorization: `Bearer ${people[0].key}` },
          });
    let n = 0;
    const body = JSON.stringify({ productId: product.id, billingCycle: "monthly" });
    const orders = await load(stack, `${stack.gatewayUrl}/api/v1/orders`, {
      requests: [
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
      ],
    });
    console.log(JSON.stringify({ flags, idle, keyed, orders }));
  } finally {
    await stack.stop();
  }
}

const deps = await ensureDependencies({
  DATABASE_URL: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  NATS_URL: process.env.NATS_URL ?? "nats://127.0.0.1:4222",
});
Object.assign(process.env, deps.urls);
process.env.LOG_LEVEL = "warn";
for (let round = 0; round < ROUNDS; round++) {
  for (const flags of [flagsA, flagsB]) {
    await once(flags, false);
    await once(flags, true);
  }
}
await deps.stop();
process.exit(0);
