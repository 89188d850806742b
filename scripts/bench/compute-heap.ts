/**
 * `node --conditions=hb-source scripts/bench/compute-heap.ts [seconds] [rate] [machines]`: whether a service's
 * memory growth under the soak's load (`npm run bench`'s memory part: the keyed index and the VPS page
 * alternated, 200 requests a second) is live heap or not. Every 30 s it prints each service's RSS
 * and V8's heap used and total from its /metrics (prom-client's default metrics), so a heap used
 * that climbs is objects kept, and an RSS that climbs over a flat heap used is the allocator's.
 */
import { sample } from "../../test/support/stack-output.ts";
import { soakLoad } from "./memory.ts";
import { localDependencies, withScratchStack } from "./scratch-stack.ts";
import { loadCustomer, seedVps } from "./seed.ts";

const seconds = Number(process.argv[2] ?? 300);
const rate = Number(process.argv[3] ?? 200);
// The soak's own customer has 50; `npm run bench` has about 6,800 machines by its soak.
const machines = Number(process.argv[4] ?? 50);
const deps = await localDependencies();
await withScratchStack("heap", async (stack, env) => {
  const who = await loadCustomer(env, {
    name: "Heap",
    email: "heap@bench.test",
    label: "h",
    scopes: ["read"],
  });
  await seedVps(env, who.customerId, machines);
  const mb = (n: number | undefined) => Math.round(((n ?? 0) / 1e6) * 10) / 10;
  const report = async (at: number) => {
    const row: Record<string, string> = {};
    for (const name of stack.procs.keys()) {
      const port = env[`${name.toUpperCase()}_METRICS_PORT`];
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      row[name] =
        `rss ${mb(sample(text, "process_resident_memory_bytes"))} heap used ${mb(sample(text, "nodejs_heap_size_used_bytes"))} of ${mb(sample(text, "nodejs_heap_size_total_bytes"))} external ${mb(sample(text, "nodejs_external_memory_bytes"))}`;
    }
    console.log(JSON.stringify({ at, ...row }));
  };
  await report(0);
  const run = soakLoad(stack, who.key, seconds, rate);
  for (let t = 30; t <= seconds; t += 30) {
    await new Promise((r) => setTimeout(r, 30_000));
    await report(t);
  }
  await run;
  await new Promise((r) => setTimeout(r, 15_000));
  await report(seconds + 15);
});
await deps.stop();
process.exit(0);
