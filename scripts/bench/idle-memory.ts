/**
 * `node scripts/bench/idle-memory.ts [label]`: starts the stack as `npm start` does (the same node
 * flags and environment; HB_SERVICE_NODE_ARGS replaces the flags to compare settings), lets it idle
 * for IDLE_SECONDS (default 20) after it answers, and prints each process's resident memory beside a
 * bare node:http process's: RSS (what issue 13 measures, MB = 10^6 bytes and MiB) and PSS (the
 * pages shared with the other node processes counted once per sharer).
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { localDependencies, procBytes, withScratchStack } from "./scratch-stack.ts";

const IDLE_MS = Number(process.env.IDLE_SECONDS ?? 20) * 1000;
const root = path.resolve(import.meta.dirname, "../..");

const deps = await localDependencies();
await withScratchStack("idle", async (stack) => {
  const bare = spawn(process.execPath, [path.join(root, "scripts/bench/bare-server.ts")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    await new Promise((resolve) => bare.stdout.once("data", resolve));
    // The idle time is what is measured.
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const rows = [...stack.procs].map(([name, p]) => [name, p.pid!] as const);
    rows.push(["bare node:http", bare.pid!]);
    const label = process.argv[2] ?? process.env.HB_SERVICE_NODE_ARGS ?? "default flags";
    console.log(`| ${label} | process | RSS MB | RSS MiB | PSS MiB |`);
    for (const [name, pid] of rows) {
      const rss = procBytes(pid, "VmRSS");
      const pss = procBytes(pid, "Pss");
      console.log(
        `| | ${name} | ${(rss / 1e6).toFixed(1)} | ${(rss / 2 ** 20).toFixed(1)} | ${(pss / 2 ** 20).toFixed(1)} |`,
      );
    }
  } finally {
    bare.kill();
  }
}).finally(() => deps.stop());
process.exit(0);
