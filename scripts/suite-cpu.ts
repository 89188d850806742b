/**
 * Where a command's CPU goes, machine-wide: runs the command (by default `npm test`) while sampling
 * every process's CPU time from /proc twice a second, and prints the CPU seconds of each kind of
 * process (the test runner, test files, the shared stack's services, private stacks, Chromium,
 * PostgreSQL, NATS, Redis, LXD) and, per test file, what it caused: its own process, its private
 * stacks and its browser. On two cores the suite is CPU-bound, so this, not a file's duration, says
 * what shortening it would take (docs/benchmarks.md, "Where the suite's CPU goes").
 *
 * Usage: node scripts/suite-cpu.ts [--json out.json] [-- command args...]
 *
 * A process's CPU after its last sample is not seen (at most half a second of each); the machine's
 * total from /proc/stat is printed beside the sum, so the part unseen or not the command's is known.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { machineBusyTicks } from "./bench/scratch-stack.ts";
import { STACK_PROCESSES } from "./stack.ts";

const HZ = 100; // USER_HZ: /proc reports CPU in clock ticks of 1/100 s on Linux.
const argv = process.argv.slice(2);
const jsonAt = argv.indexOf("--json");
const jsonOut = jsonAt === -1 ? undefined : argv.splice(jsonAt, 2)[1];
const dash = argv.indexOf("--");
const command = dash === -1 ? ["npm", "test"] : argv.slice(dash + 1);

interface Proc {
  comm: string;
  ppid: number;
  ticks: number;
  start: string;
}

function readProc(pid: number): Proc | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = s.lastIndexOf(")");
    const f = s.slice(close + 2).split(" ");
    return {
      comm: s.slice(s.indexOf("(") + 1, close),
      ppid: Number(f[1]),
      ticks: Number(f[11]) + Number(f[12]),
      start: f[19] ?? "",
    };
  } catch {
    return undefined; // ended between the listing and the read
  }
}

const read = (file: string) => {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
};
const cmdline = (pid: number) => read(`/proc/${pid}/cmdline`).replaceAll("\0", " ");
// The unit files' shared process (scripts/unit-batch.ts) and each lane of system files
// (scripts/test-lanes/lane-<n>.ts) count as one test file.
const testFileIn = (cmd: string) =>
  /(\S+\.test\.ts|\S*unit-batch\.ts|\S*test-lanes\/lane-\d+\.ts)/.exec(cmd)?.[1];

/** The test file a process was started by, through its parents, if any. */
function testFileAbove(pid: number): string | undefined {
  for (let p = pid, depth = 0; p > 1 && depth < 12; depth++) {
    const cmd = cmdline(p);
    if (/scripts\/(run-tests|test)\.ts/.test(cmd)) return undefined;
    const file = testFileIn(cmd);
    if (file) return path.basename(file);
    const up = readProc(p);
    if (!up) return undefined;
    p = up.ppid;
  }
  return undefined;
}

/** A process's kind, and the test file it belongs to where it has one. */
function classify(pid: number, proc: Proc): { kind: string; file?: string } {
  const cmd = cmdline(pid);
  const cgroup = read(`/proc/${pid}/cgroup`);
  if (cgroup.includes("lxc.payload") || cgroup.includes("lxc.monitor")) return { kind: "lxd containers" };
  if (["lxd", "lxc", "lxcfs", "dnsmasq", "forkstart"].includes(proc.comm)) return { kind: "lxd daemon" };
  if (proc.comm.startsWith("postgres")) return { kind: "postgresql" };
  if (proc.comm.startsWith("nats-server")) return { kind: "nats" };
  if (proc.comm.startsWith("redis")) return { kind: "redis" };
  if (/scripts\/run-tests\.ts/.test(cmd)) return { kind: "test runner" };
  if (/scripts\/test\.ts/.test(cmd)) return { kind: "npm test (shared stack's parent)" };
  if (/chrom/.test(proc.comm) || /chrom/.test(cmd))
    return { kind: "chromium", file: testFileAbove(proc.ppid) };
  // A service from its source or from the run's bundle of it (scripts/service-bundles.ts; the
  // admin command's bundle lies beside them, a program a test started).
  const found = /services\/(\w+)\/src\/main\.ts|hb-service-bundles\/\w+\/(\w+)\.mjs/.exec(cmd);
  const name = found?.[1] ?? found?.[2];
  const service = name && (STACK_PROCESSES as readonly string[]).includes(name) ? name : undefined;
  if (service) {
    const file = testFileAbove(proc.ppid);
    return file ? { kind: "private stacks", file } : { kind: `shared stack: ${service}` };
  }
  const own = testFileIn(cmd);
  if (own) return { kind: "test files", file: path.basename(own) };
  const file = testFileAbove(proc.ppid);
  if (file) return { kind: "started by test files", file };
  // Node 24 names its main thread MainThread: the script says which tool it is (tsc, npm, biome).
  if (proc.comm === "MainThread" || proc.comm === "node") {
    const script = cmd
      .split(" ")
      .slice(1)
      .find((a) => a && !a.startsWith("-"));
    return { kind: `other node: ${script ? path.basename(script) : "?"}` };
  }
  return { kind: `other: ${proc.comm}` };
}

const seen = new Map<string, { ticks: number; kind: string; file?: string }>();
const byKind = new Map<string, number>();
const byFile = new Map<string, Map<string, number>>();
const add = <K>(m: Map<K, number>, k: K, v: number) => m.set(k, (m.get(k) ?? 0) + v);
let first = true;

function sample() {
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const proc = readProc(pid);
    if (!proc) continue;
    const key = `${pid}@${proc.start}`;
    let known = seen.get(key);
    if (!known) {
      // What ran before the command started is not its work.
      known = { ticks: first ? proc.ticks : 0, ...classify(pid, proc) };
      seen.set(key, known);
    }
    const delta = proc.ticks - known.ticks;
    known.ticks = proc.ticks;
    if (delta <= 0) continue;
    add(byKind, known.kind, delta);
    if (known.file) {
      const files = byFile.get(known.file) ?? new Map<string, number>();
      add(files, known.kind, delta);
      byFile.set(known.file, files);
    }
  }
  first = false;
}

const machineStart = machineBusyTicks();
const started = Date.now();
sample();
const timer = setInterval(sample, 500);
const child = spawn(command[0] ?? "npm", command.slice(1), { stdio: "inherit" });
const code = await new Promise<number>((resolve) => child.on("exit", (c) => resolve(c ?? 1)));
clearInterval(timer);
sample();

const s = (ticks: number) => (ticks / HZ).toFixed(1).padStart(8);
const machine = machineBusyTicks() - machineStart;
const attributed = [...byKind.values()].reduce((a, b) => a + b, 0);
const lines = [
  `\nCPU of \`${command.join(" ")}\` (${((Date.now() - started) / 1000).toFixed(0)} s): machine ${s(machine).trim()} s, seen per process ${s(attributed).trim()} s`,
  ...[...byKind]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(([k, v]) => `${s(v)} s  ${k}`),
  "\nPer test file, with its private stacks and its browser (the 20 largest):",
  ...[...byFile]
    .map(([file, kinds]) => [file, [...kinds.values()].reduce((a, b) => a + b, 0), kinds] as const)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 20)
    .map(
      ([file, total, kinds]) =>
        `${s(total)} s  ${file} (${[...kinds].map(([k, v]) => `${k} ${(v / HZ).toFixed(1)}`).join(", ")})`,
    ),
];
process.stdout.write(`${lines.join("\n")}\n`);
if (jsonOut)
  writeFileSync(
    jsonOut,
    JSON.stringify(
      {
        command,
        machineCpuS: machine / HZ,
        byKind: Object.fromEntries([...byKind].map(([k, v]) => [k, v / HZ])),
        byFile: Object.fromEntries(
          [...byFile].map(([f, m]) => [f, Object.fromEntries([...m].map(([k, v]) => [k, v / HZ]))]),
        ),
      },
      null,
      1,
    ),
  );
process.exit(code);
