/**
 * `node scripts/bench/idle-cpu.ts [settle seconds] [measured seconds]`: starts the stack as `npm start`
 * does, lets it settle (default 30 s after it answers), then prints the CPU each service spends with
 * no request at all (ms per second, user+system from /proc, every thread), beside PostgreSQL's,
 * NATS's and Redis's. What a stack costs doing nothing is paid by every benchmark on the same cores
 * and by every stack the test suite runs. With `HB_SERVICE_NODE_ARGS="--cpu-prof
 * --cpu-prof-dir=<dir>"` each service writes a profile as it stops.
 */
import { idleCpu, localDependencies, withScratchStack } from "./scratch-stack.ts";

const SETTLE_MS = Number(process.argv[2] ?? 30) * 1000;
const MEASURE_S = Number(process.argv[3] ?? 30);

const deps = await localDependencies();
await withScratchStack("idlecpu", async (stack) => {
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const idle = await idleCpu(stack, MEASURE_S);
  console.log(`| process | CPU ms per second, idle (${MEASURE_S} s after ${SETTLE_MS / 1000} s) |`);
  console.log("|---|---|");
  for (const [name, usPerS] of Object.entries(idle))
    console.log(`| ${name} | ${(usPerS / 1000).toFixed(1)} |`);
}).finally(() => deps.stop());
process.exit(0);
