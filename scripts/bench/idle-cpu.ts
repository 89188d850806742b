/**
 * `node scripts/bench/idle-cpu.ts [settle seconds] [measured seconds]`: starts the stack as `npm start`
 * does, lets it settle (default 30 s after it answers), then prints the CPU each service spends with
 * no request at all (ms per second, user+system from /proc, every thread), beside PostgreSQL's,
 * NATS's and Redis's. What a stack costs doing nothing is paid by every benchmark on the same cores
 * and by every stack the test suite runs. With `HB_SERVICE_NODE_ARGS="--cpu-prof
 * --cpu-prof-dir=<dir>"` each service writes a profile as it stops.
 */
import { commandTicks, cpuTicks, localDependencies, withScratchStack } from "./scratch-stack.ts";

const SETTLE_MS = Number(process.argv[2] ?? 30) * 1000;
const MEASURE_S = Number(process.argv[3] ?? 30);
const SERVERS = ["postgres", "nats-server", "redis-server"];

const deps = await localDependencies();
await withScratchStack("idlecpu", async (stack) => {
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const procs = [...stack.procs].map(([name, p]) => [name, p.pid as number] as const);
  const before = procs.map(([, pid]) => cpuTicks(pid));
  const servers = SERVERS.map(commandTicks);
  await new Promise((r) => setTimeout(r, MEASURE_S * 1000));
  // Ticks are 10 ms: ms of CPU per second of idling.
  const perSecond = (ticks: number) => ((ticks * 10) / MEASURE_S).toFixed(1);
  const rows = [
    ...procs.map(([name, pid], i) => [name, perSecond(cpuTicks(pid) - before[i])]),
    ...SERVERS.map((s, i) => [s, perSecond(commandTicks(s) - servers[i])]),
  ];
  console.log(`| process | CPU ms per second, idle (${MEASURE_S} s after ${SETTLE_MS / 1000} s) |`);
  console.log("|---|---|");
  for (const [name, v] of rows) console.log(`| ${name} | ${v} |`);
}).finally(() => deps.stop());
process.exit(0);
