/**
 * `node scripts/bench/vps-cpu.ts`: CPU per request of each process for GET /api/v1/vps?limit=50
 * (50 VPS, then 5,000 with VPS_MANY=1), beside the keyed GET /api/v1/ on the same stack as the
 * yardstick a loaded machine moves too. CPU per request, not req/s: it holds on a busy host.
 * VPS_LIMIT (default 50) sets the page size. ROUNDS (default 3) alternates the two routes that many times, 4 s each, and reports medians.
 */
import autocannon from "autocannon";
import { cpuTicks, localDependencies, withScratchStack } from "./scratch-stack.ts";
import { loadCustomer, seedVps } from "./seed.ts";

const rounds = Number(process.env.ROUNDS ?? 3);
const deps = await localDependencies();
await withScratchStack("vpscpu", async (stack, env) => {
  const who = await loadCustomer(env, {
    name: "VPS CPU",
    email: "vps-cpu@bench.test",
    label: "vps",
    scopes: ["read"],
  });
  await seedVps(env, who.customerId, 50);
  if (process.env.VPS_MANY === "1") await seedVps(env, who.customerId, 4950);
  const headers = { authorization: `Bearer ${who.key}` };
  const pids = [...stack.procs].map(([name, p]) => [name, p.pid!] as const);
  const routes = {
    vps: `${stack.gatewayUrl}/api/v1/vps?limit=${process.env.VPS_LIMIT ?? 50}`,
    keyed: `${stack.gatewayUrl}/api/v1/`,
  };
  const samples: Record<string, Record<string, number[]>> = { vps: {}, keyed: {} };
  for (const url of Object.values(routes)) await autocannon({ url, headers, connections: 10, duration: 1 });
  for (let i = 0; i < rounds; i++) {
    for (const [route, url] of Object.entries(routes)) {
      const before = pids.map(([, pid]) => cpuTicks(pid));
      const r = await autocannon({ url, headers, connections: 10, duration: 4 });
      if (r.non2xx + r.errors > 0) throw new Error(`${route}: ${r.non2xx + r.errors} failed requests`);
      const n = r.requests.total || 1;
      for (const [j, [name, pid]] of pids.entries()) {
        const list = samples[route][name] ?? [];
        list.push(((cpuTicks(pid) - before[j]) * 10_000) / n);
        samples[route][name] = list;
      }
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const [route, byProc] of Object.entries(samples)) {
    const cpu = Object.fromEntries(
      Object.entries(byProc).map(([name, xs]) => [name, Math.round(median(xs))]),
    );
    console.log(
      JSON.stringify({ route, vps: process.env.VPS_MANY === "1" ? 5000 : 50, cpuUsPerRequest: cpu }),
    );
  }
});
await deps.stop();
process.exit(0);
