/**
 * `node scripts/bench/idle-memory.ts [label]`: starts the stack as `npm start` does (the same node
 * flags and environment; HB_SERVICE_NODE_ARGS replaces the flags to compare settings), lets it idle
 * for IDLE_SECONDS (default 20) after it answers, and prints each process's resident memory beside a
 * bare node:http process's: RSS (what issue 13 measures, MB = 10^6 bytes and MiB) and PSS (the
 * pages shared with the other node processes counted once per sharer).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { ensureDependencies } from "../deps.ts";
import { stackEnv, startStack } from "../stack.ts";

const IDLE_MS = Number(process.env.IDLE_SECONDS ?? 20) * 1000;
const root = path.resolve(import.meta.dirname, "../..");

/** A field of /proc/<pid>/smaps_rollup or status, in bytes. */
const procBytes = (pid: number, file: string, field: string): number => {
  const line = readFileSync(`/proc/${pid}/${file}`, "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${field}:`));
  return Number(line?.split(/\s+/)[1] ?? 0) * 1024;
};

async function main() {
  const deps = await ensureDependencies({
    DATABASE_URL: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
    REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    NATS_URL: process.env.NATS_URL ?? "nats://127.0.0.1:4222",
  });
  Object.assign(process.env, deps.urls);
  process.env.LOG_LEVEL = "warn";
  const suffix = `idle${Date.now().toString(36)}`;
  const db = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
  db.pathname = `/hb_${suffix}`;
  const { env, gatewayPort } = await stackEnv({ databaseUrl: db.toString(), ns: suffix });
  const stack = await startStack({ env, output: "ignore", gatewayPort });
  const bare = spawn(process.execPath, [path.join(root, "scripts/bench/bare-server.ts")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    await new Promise((resolve) => bare.stdout.once("data", resolve));
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const rows = [...stack.procs].map(([name, p]) => [name, p.pid!] as const);
    rows.push(["bare node:http", bare.pid!]);
    const label = process.argv[2] ?? process.env.HB_SERVICE_NODE_ARGS ?? "default flags";
    console.log(`| ${label} | process | RSS MB | RSS MiB | PSS MiB |`);
    for (const [name, pid] of rows) {
      const rss = procBytes(pid, "status", "VmRSS");
      const pss = procBytes(pid, "smaps_rollup", "Pss");
      console.log(
        `| | ${name} | ${(rss / 1e6).toFixed(1)} | ${(rss / 2 ** 20).toFixed(1)} | ${(pss / 2 ** 20).toFixed(1)} |`,
      );
    }
  } finally {
    bare.kill();
    await stack.stop();
  }
}

await main();
process.exit(0);
