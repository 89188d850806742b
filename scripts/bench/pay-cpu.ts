/**
 * `node scripts/bench/pay-cpu.ts [rate] [seconds] [rounds]`: what one invoice pay from credit
 * costs each process, on a fresh stack, measured `rounds` times (default 3) one after another.
 * Rate 0 (the default) loads it as `npm run bench` does: 50 connections as fast as answered;
 * a rate above 0 offers that many pays a second over 10 connections.
 *
 * CPU is each process's user+system ticks over the round divided by the pays answered (µs per
 * pay), and the same less what the process spends idle (its timers and background passes,
 * measured for as long as a round with no load just before it: at a low rate they are a large
 * share of the raw figure). PostgreSQL is counted on the stack's own backends only
 * (pg_stat_activity of its database: the machine's PostgreSQL serves other stacks too); Redis and
 * NATS are shared by everything on the machine and are not counted. The load average is printed
 * with each round: on a shared machine compare builds alternated in the same minutes, at a fixed
 * rate both sustain, not absolute figures.
 * With `HB_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=<dir>"` each service writes a profile
 * as it stops. `PAY_KEYS=1` sends an Idempotency-Key with every pay (as the portal and SDK do).
 * `PAY_WAITS=1` samples the stack's PostgreSQL backends every 10 ms during each round and prints
 * what they were doing (state, and the wait event: ClientRead inside a transaction is a backend
 * waiting for billing's next round trip, Lock a row lock held by another pay).
 */
import { randomUUID } from "node:crypto";
import { loadavg } from "node:os";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import autocannon from "autocannon";
import postgres from "postgres";
import { sample as metricSample } from "../../test/support/stack-output.ts";
import { serviceDbUrl } from "../db-roles.ts";
import { cpuTicks, localDependencies, machineBusyTicks, withScratchStack } from "./scratch-stack.ts";
import { adminClients, fundedCustomer, payRequests } from "./seed.ts";

const RATE = Number(process.argv[2] ?? 0);
const SECONDS = Number(process.argv[3] ?? 8);
const ROUNDS = Number(process.argv[4] ?? 3);
const KEYS = process.env.PAY_KEYS === "1";
const WAITS = process.env.PAY_WAITS === "1";

/** Samples the stack's backends until `stop` resolves: how often each was in each state. */
async function sampleWaits(sql: postgres.Sql, stop: Promise<unknown>) {
  const seen = new Map<string, number>();
  let done = false;
  void stop.then(() => {
    done = true;
  });
  let samples = 0;
  while (!done) {
    const rows = await sql<{ what: string }[]>`
      select coalesce(state, '?') || coalesce(' ' || wait_event_type || ':' || wait_event, '') as what
      from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()
        and application_name = 'billing'`;
    samples++;
    for (const r of rows) seen.set(r.what, (seen.get(r.what) ?? 0) + 1);
    await new Promise((r) => setTimeout(r, 10));
  }
  // Backends in each state, on average over the samples.
  return Object.fromEntries(
    [...seen].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Number((v / samples).toFixed(2))]),
  );
}
const PEOPLE = 150;

/** The stack's PostgreSQL backends (its pool's connections, which live as long as the stack). */
async function backends(sql: postgres.Sql): Promise<number[]> {
  const rows = await sql<{ pid: number }[]>`
    select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
  return rows.map((r) => r.pid);
}

const ticksOf = (pids: number[]) =>
  pids.reduce((sum, pid) => {
    try {
      return sum + cpuTicks(pid);
    } catch {
      return sum; // gone meanwhile
    }
  }, 0);

const deps = await localDependencies();
await withScratchStack("paycpu", async (stack, env) => {
  const clients = adminClients(env);
  await clients.auth.client.updateSettings({ hourlyRequestLimit: 1_000_000 });
  const people: Awaited<ReturnType<typeof fundedCustomer>>[] = [];
  for (let i = 0; i < PEOPLE; i++)
    people.push(
      await fundedCustomer(clients, {
        name: `P${i}`,
        email: `p${i}@paycpu.test`,
        label: "pay",
        scopes: ["billing"],
      }),
    );
  clients.auth.close();
  clients.billing.close();
  const perPerson = Math.ceil(((RATE > 0 ? RATE : 2000) * (SECONDS + 2) * (ROUNDS + 1)) / PEOPLE) + 1;
  const billingSql = postgres(serviceDbUrl(env.DATABASE_URL, "billing"), { max: 1, onnotice: () => {} });
  // Unpaid invoices, in turn by person (consecutive pays are different people's, as in the bench).
  const invoices = await billingSql<{ id: string; customer_id: string }[]>`
    insert into billing.documents (id, kind, number, customer_id, person_id, total, currency, purpose)
    select gen_random_uuid(), 'invoice', 'INV-PAYCPU-' || gen_random_uuid(), c.customer_id, c.person_id, 1, 'EUR', 'manual'
    from generate_series(1, ${perPerson}) g
    cross join (select distinct person_id, customer_id from billing.balances where balance > 100000) c
    order by g, c.person_id
    returning id, customer_id`;
  const admin = postgres(env.DATABASE_URL, { max: 1, onnotice: () => {} });
  const keyOf = new Map(people.map((p) => [p.customerId, p.key]));
  const opts: autocannon.Options = {
    ...(RATE > 0 ? { connections: 10, overallRate: RATE } : { connections: 50 }),
    url: `${stack.gatewayUrl}/api/v1/`,
    requests: payRequests(invoices, keyOf, () => ({
      "content-type": "application/json",
      ...(KEYS ? { "idempotency-key": randomUUID() } : {}),
    })),
  };
  // Warm-up: statements prepared, connections open, code optimised.
  await autocannon({ ...opts, duration: 3 });
  const procs = [...stack.procs].map(([name, p]) => [name, p.pid as number] as const);
  /** The gateway's PayDocuments calls so far and the pays they carried (rpc_client_coalesced_calls). */
  const coalesced = async () => {
    const text = await (await fetch(`http://127.0.0.1:${env.GATEWAY_METRICS_PORT}/metrics`)).text();
    const labels = { method: `/${BillingService.typeName}/${BillingService.method.payDocument.name}` };
    return {
      calls: metricSample(text, "rpc_client_coalesced_calls_count", labels) ?? 0,
      pays: metricSample(text, "rpc_client_coalesced_calls_sum", labels) ?? 0,
    };
  };
  for (let round = 1; round <= ROUNDS; round++) {
    await new Promise((r) => setTimeout(r, 1000));
    const pg = await backends(admin);
    const sample = () => [...procs.map(([, pid]) => cpuTicks(pid)), ticksOf(pg)];
    const names = [...procs.map(([name]) => name), "postgres"];
    // Idle for as long as the round and the settling after it.
    const idleFrom = sample();
    await new Promise((res) => setTimeout(res, (SECONDS + 1) * 1000));
    const idleTicks = sample().map((t, i) => t - idleFrom[i]);
    const before = sample();
    const machineBefore = machineBusyTicks();
    const load = loadavg()[0];
    const coalescedBefore = await coalesced();
    const run = autocannon({ ...opts, duration: SECONDS });
    const waits = WAITS ? sampleWaits(admin, run) : undefined;
    const r = await run;
    // What a pay leaves behind (the outbox relay, the request log) is counted with it.
    await new Promise((res) => setTimeout(res, 1000));
    const n = r["2xx"] || 1;
    const per = (ticks: number) => Math.round((ticks * 10_000) / n);
    const after = sample();
    const cpu: Record<string, number> = {};
    const lessIdle: Record<string, number> = {};
    names.forEach((name, i) => {
      cpu[name] = per(after[i] - before[i]);
      lessIdle[name] = per(after[i] - before[i] - idleTicks[i]);
    });
    cpu["whole machine"] = per(machineBusyTicks() - machineBefore);
    const coalescedAfter = await coalesced();
    const companionCalls = coalescedAfter.calls - coalescedBefore.calls;
    console.log(
      JSON.stringify({
        round,
        load1: Number(load.toFixed(1)),
        paysPerSecond: Math.round(r["2xx"] / SECONDS),
        ok: r["2xx"],
        non2xx: r.non2xx,
        errors: r.errors,
        p50: r.latency.p50,
        p99: r.latency.p99,
        cpuMicrosPerPay: cpu,
        lessIdle,
        // Pays per PayDocuments call the gateway made (docs/architecture.md, "Coalesced calls").
        paysPerBillingCall: companionCalls
          ? Number(((coalescedAfter.pays - coalescedBefore.pays) / companionCalls).toFixed(1))
          : 0,
        ...(waits ? { billingBackends: await waits } : {}),
      }),
    );
  }
  const [check] = await billingSql<{ mismatched: number; double: number }[]>`
    select (select count(*)::int from billing.balances b
             where b.balance <> coalesce((select sum(amount) from billing.ledger l where l.person_id = b.person_id), 0)) as mismatched,
           (select count(*)::int from (select document_id from billing.ledger where kind = 'payment' and document_id is not null
             group by document_id having count(*) > 1) d) as double`;
  console.log(JSON.stringify({ ledgerCheck: check }));
  await billingSql.end();
  await admin.end();
});
await deps.stop();
process.exit(0);
