/**
 * `AB_DIRS="<checkout A> <checkout B>" node scripts/bench/vps-ab.ts`: GET /api/v1/vps?limit=50
 * (50 VPS) on two builds at once, each checkout's own scratch stack side by side, the rounds
 * alternated (A B, B A, ...) so both see the same minutes of a shared machine. Prints CPU per
 * request of each process per round (ticks ÷ requests) and the medians. ROUNDS (8), DURATION
 * (5 s), CONNECTIONS (10). Each checkout needs its npm install. It also checks that the two
 * answers have the same text once ids, times and addresses are blanked.
 */
import type { Stack } from "../stack.ts";

type ScratchStack = typeof import("./scratch-stack.ts");
type Seed = typeof import("./seed.ts");

const dirs = (process.env.AB_DIRS ?? "").split(" ").filter(Boolean);
if (dirs.length === 0) {
  console.error('usage: AB_DIRS="<checkout A> <checkout B>" node scripts/bench/vps-ab.ts');
  process.exit(2);
}
const rounds = Number(process.env.ROUNDS ?? 8);
const duration = Number(process.env.DURATION ?? 5);
const connections = Number(process.env.CONNECTIONS ?? 10);
const { default: autocannon } = (await import("autocannon")) as { default: typeof import("autocannon") };

interface Build {
  label: string;
  url: string;
  headers: Record<string, string>;
  pids: [string, number][];
  cpuTicks: (pid: number) => number;
}
const builds: Build[] = [];
let release = () => {};
const done = new Promise<void>((r) => {
  release = r;
});
const running: Promise<void>[] = [];
const deps = await (
  (await import(`${dirs[0]}/scripts/bench/scratch-stack.ts`)) as ScratchStack
).localDependencies();

for (const [i, dir] of dirs.entries()) {
  const ss = (await import(`${dir}/scripts/bench/scratch-stack.ts`)) as ScratchStack;
  const seed = (await import(`${dir}/scripts/bench/seed.ts`)) as Seed;
  let up = () => {};
  const isUp = new Promise<void>((r) => {
    up = r;
  });
  const run = ss.withScratchStack(`vpsab${i}`, async (stack: Stack, env: Record<string, string>) => {
    const clients = seed.adminClients(env);
    await clients.auth.client.updateSettings({ hourlyRequestLimit: 1_000_000 });
    const who = await seed.fundedCustomer(clients, {
      name: "VPS A/B",
      email: `vps-ab${i}@bench.test`,
      label: "vps",
      scopes: ["read"],
    });
    clients.auth.close();
    clients.billing.close();
    await seed.seedVps(env, who.customerId, 50);
    builds[i] = {
      label: dir,
      url: `${stack.gatewayUrl}/api/v1/vps?limit=50`,
      headers: { authorization: `Bearer ${who.key}` },
      pids: [...stack.procs].map(([name, p]) => [name, p.pid ?? 0]),
      cpuTicks: ss.cpuTicks,
    };
    up();
    await done;
  });
  running.push(run);
  await Promise.race([isUp, run]);
}

// What differs between two seedings: ids, times and the addresses made from the ids.
const blank = (text: string) =>
  JSON.stringify(JSON.parse(text), (k, v) =>
    ["id", "created_at", "next_due_date", "primary_ip", "address"].includes(k) ? "·" : v,
  );
const bodies = await Promise.all(
  builds.map(async (b) => (await fetch(b.url, { headers: b.headers })).text()),
);
console.log(
  JSON.stringify({
    bytes: bodies.map((b) => b.length),
    sameText: bodies.every((b) => blank(b) === blank(bodies[0])),
  }),
);

for (const b of builds) await autocannon({ url: b.url, headers: b.headers, connections, duration: 2 });
const samples = new Map<string, Record<string, number[]>>();
for (let k = 0; k < rounds; k++) {
  for (const b of k % 2 === 0 ? builds : [...builds].reverse()) {
    const before = b.pids.map(([, pid]) => b.cpuTicks(pid));
    const r = await autocannon({ url: b.url, headers: b.headers, connections, duration });
    if (r.non2xx + r.errors > 0) throw new Error(`${b.label}: ${r.non2xx + r.errors} failed requests`);
    const n = r.requests.total || 1;
    const row: Record<string, number> = { rps: Math.round(n / duration) };
    for (const [j, [name, pid]] of b.pids.entries())
      row[name] = Math.round(((b.cpuTicks(pid) - before[j]) * 10_000) / n);
    row.sum = row.gateway + row.compute + row.billing;
    console.log(JSON.stringify({ round: k, build: b.label, ...row }));
    const mine = samples.get(b.label) ?? {};
    for (const [key, v] of Object.entries(row)) mine[key] = [...(mine[key] ?? []), v];
    samples.set(b.label, mine);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [label, byKey] of samples)
  console.log(
    JSON.stringify({
      median: label,
      ...Object.fromEntries(Object.entries(byKey).map(([k, v]) => [k, median(v)])),
    }),
  );
release();
await Promise.all(running);
await deps.stop();
process.exit(0);
