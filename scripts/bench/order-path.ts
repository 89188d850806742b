/**
 * `node scripts/bench/order-path.ts [rate] [seconds]`: what one order settled from credit and one
 * invoice pay cost each process, at a fixed offered rate (default 40/s for 10 s) so that the figures
 * do not depend on how saturated a loaded machine is (rate 0: 50 connections, as fast as answered). On a fresh stack: the RPCs each service
 * answered per request, by method (from its /metrics), and the CPU µs each process spent per
 * request (PostgreSQL, NATS and Redis summed over their processes; the whole machine includes
 * every other process on it). With `HB_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=<dir>"` each
 * service writes a profile as it stops. The CPU each process spends idle (µs per second, before
 * the orders and after them) is printed too: at a low rate it is a large share of the per-request
 * figures.
 */

import { BillingCycle, ProductKind } from "@hb/contracts/hb/billing/v1/common_pb";
import autocannon from "autocannon";
import postgres from "postgres";
import { serviceDbUrl } from "../db-roles.ts";
import type { Stack } from "../stack.ts";
import {
  commandTicks,
  cpuTicks,
  idleCpu,
  localDependencies,
  machineBusyTicks,
  procStat,
  SERVER_COMMANDS,
  withScratchStack,
} from "./scratch-stack.ts";
import { adminClients, fundedCustomer, orderRequests, payRequests } from "./seed.ts";

const RATE = Number(process.argv[2] ?? 40);
const SECONDS = Number(process.argv[3] ?? 10);

/** rpc_server_handled_total of every process, by "process method". */
async function rpcCounts(env: Record<string, string>, names: string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const name of names) {
    const res = await fetch(`http://127.0.0.1:${env[`${name.toUpperCase()}_METRICS_PORT`]}/metrics`);
    for (const line of (await res.text()).split("\n")) {
      const m = /^rpc_server_handled_total\{(.*)\} (\S+)$/.exec(line);
      const method = m && /method="([^"]+)"/.exec(m[1])?.[1];
      if (!m || !method) continue;
      const key = `${name} ${method.split("/").pop()}`;
      counts.set(key, (counts.get(key) ?? 0) + Number(m[2]));
    }
  }
  return counts;
}

/**
 * PostgreSQL's own counters for the stack's database: transactions, and each table's scans and
 * rows written (work the services do in triggers or background passes shows here too).
 */
async function pgCounts(databaseUrl: string): Promise<Map<string, number>> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const [db] = await sql<{ xacts: string; returned: string; fetched: string }[]>`
      select (xact_commit + xact_rollback)::text as xacts, tup_returned::text as returned, tup_fetched::text as fetched
      from pg_stat_database where datname = current_database()`;
    const counts = new Map<string, number>([
      ["transactions", Number(db.xacts)],
      ["rows returned", Number(db.returned)],
      ["rows fetched", Number(db.fetched)],
    ]);
    const tables = await sql<{ name: string; seq: string; seq_read: string; idx: string; written: string }[]>`
      select schemaname || '.' || relname as name, coalesce(seq_scan, 0)::text as seq,
             coalesce(seq_tup_read, 0)::text as seq_read, coalesce(idx_scan, 0)::text as idx,
             (n_tup_ins + n_tup_upd + n_tup_del)::text as written
      from pg_stat_user_tables`;
    for (const t of tables) {
      counts.set(`${t.name} seq scans`, Number(t.seq));
      counts.set(`${t.name} seq rows`, Number(t.seq_read));
      counts.set(`${t.name} index scans`, Number(t.idx));
      counts.set(`${t.name} rows written`, Number(t.written));
    }
    // Rows each index handed out: an index scan that reads a customer's whole history for every
    // order shows here, not in the scan counts.
    const indexes = await sql<{ name: string; read: string }[]>`
      select schemaname || '.' || indexrelname as name, coalesce(idx_tup_read, 0)::text as read
      from pg_stat_user_indexes`;
    for (const i of indexes) counts.set(`${i.name} index rows read`, Number(i.read));
    return counts;
  } finally {
    await sql.end();
  }
}

/**
 * PostgreSQL's CPU ticks by who spent them: each live backend of the machine's server under its
 * role (a service's pool) or its kind (walwriter, checkpointer, autovacuum…), and the backends that
 * exited (autovacuum workers, closed connections) from the postmaster's reaped-children count.
 */
async function pgTicksByBackend(databaseUrl: string): Promise<Map<string, number>> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql<{ pid: number; who: string }[]>`
      select pid, case when backend_type = 'client backend' then coalesce(usename, '?') else backend_type end as who
      from pg_stat_activity where pid <> pg_backend_pid()`;
    const ticks = new Map<string, number>();
    let postmaster = 0;
    for (const r of rows) {
      try {
        const f = procStat(r.pid);
        ticks.set(r.who, (ticks.get(r.who) ?? 0) + Number(f[11]) + Number(f[12]));
        postmaster ||= Number(f[1]);
      } catch {
        // ended meanwhile: its ticks show in the postmaster's reaped children
      }
    }
    if (postmaster) {
      const f = procStat(postmaster);
      ticks.set("postmaster", Number(f[11]) + Number(f[12]));
      ticks.set("exited backends", Number(f[13]) + Number(f[14]));
    }
    return ticks;
  } finally {
    await sql.end();
  }
}

const perRequest = (before: Map<string, number>, after: Map<string, number>, n: number) => {
  const out: Record<string, number> = {};
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d > 0) out[k] = Number((d / n).toFixed(2));
  }
  return out;
};

async function measure(stack: Stack, env: Record<string, string>, opts: autocannon.Options) {
  const procs = [...stack.procs].map(([name, p]) => [name, p.pid as number] as const);
  // A short warm-up at the same rate: statements prepared, connections open.
  await autocannon({ ...opts, duration: 2 });
  await new Promise((r) => setTimeout(r, 1000));
  const rpcBefore = await rpcCounts(
    env,
    procs.map(([n]) => n),
  );
  const pgBefore = await pgCounts(env.DATABASE_URL);
  const pgCpuBefore = await pgTicksByBackend(env.DATABASE_URL);
  const cpuBefore = procs.map(([, pid]) => cpuTicks(pid));
  const serversBefore = SERVER_COMMANDS.map(commandTicks);
  const machineBefore = machineBusyTicks();
  const r = await autocannon({ ...opts, duration: SECONDS });
  // The work a request leaves behind (outbox relay, provisioner, builds) is counted with it.
  await new Promise((res) => setTimeout(res, 3000));
  const n = r.requests.total || 1;
  const per = (ticks: number) => Math.round((ticks * 10_000) / n);
  const cpu: Record<string, number> = {};
  procs.forEach(([name, pid], i) => {
    cpu[name] = per(cpuTicks(pid) - cpuBefore[i]);
  });
  SERVER_COMMANDS.forEach((s, i) => {
    cpu[s] = per(commandTicks(s) - serversBefore[i]);
  });
  cpu["whole machine"] = per(machineBusyTicks() - machineBefore);
  const rpcAfter = await rpcCounts(
    env,
    procs.map(([name]) => name),
  );
  const rpcs = perRequest(rpcBefore, rpcAfter, n);
  const pg = perRequest(pgBefore, await pgCounts(env.DATABASE_URL), n);
  // A pool's connection opened during the run counts whole (its life is the run's).
  const postgresCpu: Record<string, number> = {};
  for (const [who, t] of await pgTicksByBackend(env.DATABASE_URL)) {
    const us = per(t - (pgCpuBefore.get(who) ?? 0));
    if (us > 0) postgresCpu[who] = us;
  }
  return {
    requests: r.requests.total,
    status: { "2xx": r["2xx"], non2xx: r.non2xx, errors: r.errors },
    p50: r.latency.p50,
    p99: r.latency.p99,
    cpuMicrosPerRequest: cpu,
    postgresCpuMicrosPerRequest: postgresCpu,
    rpcsPerRequest: rpcs,
    postgresPerRequest: pg,
  };
}

const deps = await localDependencies();
await withScratchStack("orderpath", async (stack, env) => {
  const clients = adminClients(env);
  await clients.auth.client.updateSettings({ hourlyRequestLimit: 1_000_000 });
  const product = (
    await clients.billing.client.adminCreateProduct({
      name: "Order path",
      kind: ProductKind.GAME,
      prices: [{ cycle: BillingCycle.MONTHLY, price: { currency: "EUR", amount: "1" } }],
      currency: "EUR",
    })
  ).product;
  if (!product) throw new Error("no product");
  // Orders have a cool-down of 30 per 15 minutes per person: enough people for the run.
  const people: Awaited<ReturnType<typeof fundedCustomer>>[] = [];
  const needed = RATE > 0 ? Math.ceil((RATE * (SECONDS + 2)) / 25) + 1 : 150;
  for (let i = 0; i < needed; i++)
    people.push(
      await fundedCustomer(clients, {
        name: `O${i}`,
        email: `o${i}@orderpath.test`,
        label: "op",
        scopes: ["orders", "billing"],
      }),
    );
  clients.auth.close();
  clients.billing.close();
  // Rate 0: as npm run bench loads it, 50 connections as fast as the stack answers.
  const fixed = RATE > 0 ? { connections: 10, overallRate: RATE } : { connections: 50 };
  const idleBefore = await idleCpu(stack, SECONDS);
  const orders = await measure(stack, env, {
    ...fixed,
    url: `${stack.gatewayUrl}/api/v1/orders`,
    requests: orderRequests(people, product.id),
  });
  const sql = postgres(serviceDbUrl(env.DATABASE_URL, "billing"), { max: 1, onnotice: () => {} });
  const invoices = await sql<{ id: string; customer_id: string }[]>`
    insert into billing.documents (id, kind, number, customer_id, person_id, total, currency, purpose)
    select gen_random_uuid(), 'invoice', 'INV-PATH-' || gen_random_uuid(), c.customer_id, c.person_id, 1, 'EUR', 'manual'
    from generate_series(1, ${RATE > 0 ? Math.ceil((RATE * (SECONDS + 3)) / people.length) + 1 : 200}) g
    cross join (select distinct person_id, customer_id from billing.balances where balance > 100000) c
    returning id, customer_id`;
  await sql.end();
  const idleAfterOrders = await idleCpu(stack, SECONDS);
  const keyOf = new Map(people.map((p) => [p.customerId, p.key]));
  const pays = await measure(stack, env, {
    ...fixed,
    url: `${stack.gatewayUrl}/api/v1/`,
    requests: payRequests(invoices, keyOf),
  });
  console.log(
    JSON.stringify({ rate: RATE, seconds: SECONDS, idleBefore, orders, idleAfterOrders, pays }, null, 1),
  );
});
await deps.stop();
process.exit(0);
