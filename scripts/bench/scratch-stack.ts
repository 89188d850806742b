/**
 * What every measuring script (npm run bench, npm run soak, scripts/bench/*) needs around the
 * stack it measures: the local PostgreSQL, Redis and NATS; a stack on its own database and
 * namespace that is stopped and dropped afterwards; and each process's CPU time and memory.
 */
import { readdirSync, readFileSync } from "node:fs";
import postgres from "postgres";
import { ensureDependencies } from "../deps.ts";
import { removeRunData } from "../run-data.ts";
import { type Stack, stackEnv, startStack } from "../stack.ts";

const DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/postgres";

/** Starts (or finds) the local dependencies and points this process's environment at them. */
export async function localDependencies() {
  const deps = await ensureDependencies({
    DATABASE_URL: process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    NATS_URL: process.env.NATS_URL ?? "nats://127.0.0.1:4222",
  });
  Object.assign(process.env, deps.urls);
  process.env.LOG_LEVEL ??= "warn";
  return deps;
}

/**
 * Runs `fn` against a fresh stack (its own database and namespace, named after `label`), with
 * `extraEnv` set for the stack's processes; stops the stack and removes its database, streams and
 * Redis keys afterwards.
 */
export async function withScratchStack<T>(
  label: string,
  fn: (stack: Stack, env: Record<string, string>) => Promise<T>,
  extraEnv: Record<string, string> = {},
): Promise<T> {
  const saved = { ...process.env };
  Object.assign(process.env, extraEnv);
  const suffix = `${label}${Date.now().toString(36)}`;
  const db = new URL(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
  db.pathname = `/hb_${suffix}`;
  try {
    const { env, gatewayPort } = await stackEnv({ databaseUrl: db.toString(), ns: suffix });
    const stack = await startStack({ env, output: "ignore", gatewayPort });
    try {
      return await fn(stack, env);
    } finally {
      await stack.stop();
    }
  } finally {
    for (const k of Object.keys(extraEnv)) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
    const admin = new URL(db);
    admin.pathname = "/postgres";
    const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
    // The database, and the namespace's streams and Redis keys (its key table's have no expiry):
    // every bench run left them behind before.
    try {
      await removeRunData(sql, { db: db.pathname.slice(1), ns: suffix });
    } finally {
      await sql.end();
    }
  }
}

/** CPU time a process has used: utime + stime, in clock ticks (1/100 s). */
/**
 * The fields of /proc/<pid>/stat after the command's name, from the state on (index 0 is the
 * state, 1 the parent's pid, 11 and 12 user and system ticks, 13 and 14 those of reaped children).
 */
export function procStat(pid: number): string[] {
  return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
}

export function cpuTicks(pid: number): number {
  const f = procStat(pid);
  return Number(f[11]) + Number(f[12]);
}

/** A field of /proc/<pid>/status (VmRSS) or smaps_rollup (Pss), in bytes (Linux). */
export function procBytes(pid: number, field: "VmRSS" | "Pss"): number {
  const file = field === "Pss" ? "smaps_rollup" : "status";
  const line = readFileSync(`/proc/${pid}/${file}`, "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${field}:`));
  return Number(line?.split(/\s+/)[1] ?? 0) * 1024;
}

/**
 * CPU time of every process with this command name (all PostgreSQL backends, say), in clock ticks;
 * a process that exits meanwhile takes its time with it, so this is a lower bound.
 */
export function commandTicks(comm: string): number {
  let ticks = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === comm) ticks += cpuTicks(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return ticks;
}

/** Busy CPU time of the whole machine (every core), in clock ticks, from /proc/stat. */
export function machineBusyTicks(): number {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync("/proc/stat", "utf8")
    .split("\n")[0]
    .trim()
    .split(/\s+/)
    .map(Number);
  return user + nice + system + irq + softirq + steal;
}

/** The servers a stack uses, measured by command name (every PostgreSQL backend counted). */
export const SERVER_COMMANDS = ["postgres", "nats-server", "redis-server"];

/**
 * CPU µs per second each of the stack's processes and servers spends over `seconds` with no load
 * (timers, consumers, background passes), by name.
 */
export async function idleCpu(stack: Stack, seconds: number): Promise<Record<string, number>> {
  const procs = [...stack.procs].map(([name, p]) => [name, p.pid as number] as const);
  const before = procs.map(([, pid]) => cpuTicks(pid));
  const servers = SERVER_COMMANDS.map(commandTicks);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const per = (ticks: number) => Math.round((ticks * 10_000) / seconds);
  return Object.fromEntries([
    ...procs.map(([name, pid], i) => [name, per(cpuTicks(pid) - before[i])]),
    ...SERVER_COMMANDS.map((s, i) => [s, per(commandTicks(s) - servers[i])]),
  ]);
}
