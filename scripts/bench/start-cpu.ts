/**
 * `node scripts/bench/start-cpu.ts`: what starting a stack costs, which every private stack of the
 * test suite pays. Starts a fresh stack N times (default 3) one after another and prints, for each,
 * the wall time until it answered and the CPU each service had spent by then (ms; 10 ms ticks).
 */
import { cpuTicks, localDependencies, withScratchStack } from "./scratch-stack.ts";

await localDependencies();
for (let i = 0; i < Number(process.env.N ?? 3); i++) {
  const started = Date.now();
  await withScratchStack(`startcpu${i}`, async (stack) => {
    const wallMs = Date.now() - started;
    const cpuMs = Object.fromEntries([...stack.procs].map(([name, p]) => [name, cpuTicks(p.pid ?? 0) * 10]));
    const totalMs = Object.values(cpuMs).reduce((a, b) => a + b, 0);
    console.log(JSON.stringify({ wallMs, cpuMs, totalMs }));
  });
}
