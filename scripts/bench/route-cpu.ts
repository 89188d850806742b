/**
 * `node scripts/bench/route-cpu.ts`: the gateway's and each backend's CPU per request for keyed
 * routes that differ by one step each, on one fresh stack: no backend call (GET /api/v1/), one
 * billing read (GET /api/v1/invoices, none to list), and two reads at once (GET /api/v1/account/balance).
 * 20 connections, 5 s after a 1 s warm-up; tells what a backend call and a body cost the gateway.
 */
import autocannon from "autocannon";
import { cpuTicks, localDependencies, withScratchStack } from "./scratch-stack.ts";
import { loadCustomer } from "./seed.ts";

const deps = await localDependencies();
await withScratchStack("routes", async (stack, env) => {
  const who = await loadCustomer(env, {
    name: "Routes",
    email: "routes@bench.test",
    label: "routes",
    scopes: ["read", "billing"],
  });
  const headers = { authorization: `Bearer ${who.key}`, "content-type": "application/json" };
  const pids = [...stack.procs].map(([name, p]) => [name, p.pid!] as const);
  for (const [label, opts] of [
    ["GET /api/v1/ (no backend call)", { url: `${stack.gatewayUrl}/api/v1/` }],
    ["GET /api/v1/invoices (one billing list, empty)", { url: `${stack.gatewayUrl}/api/v1/invoices` }],
    [
      "GET /api/v1/account/balance (a billing and an auth read)",
      { url: `${stack.gatewayUrl}/api/v1/account/balance` },
    ],
  ] as const) {
    // ROUTE=<text> keeps the routes whose label contains it (for a profile of one).
    if (process.env.ROUTE && !label.includes(process.env.ROUTE)) continue;
    await autocannon({ ...opts, headers, connections: 20, duration: 1 });
    const before = pids.map(([, pid]) => cpuTicks(pid));
    const r = await autocannon({ ...opts, headers, connections: 20, duration: 5 });
    const n = r.requests.total || 1;
    const cpu = pids.map(
      ([name, pid], i) => `${name} ${Math.round(((cpuTicks(pid) - before[i]) * 10_000) / n)}`,
    );
    console.log(
      JSON.stringify({
        route: label,
        rps: Math.round(r.requests.average),
        p99: r.latency.p99,
        bad: r.non2xx + r.errors,
        cpu: cpu.join(", "),
      }),
    );
  }
});
await deps.stop();
process.exit(0);
