/**
 * `npm test`: starts the real services on free ports against their own database, stream names
 * and Redis keys (so two runs never collide), runs every unit and system test with Node's test
 * runner, then tears everything down.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, globSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import { CONTRACT_CACHE_ROOT } from "../test/contract.ts";
import { chromiumPath } from "../test/support/chromium-path.ts";
import { ensureDependencies } from "./deps.ts";
import { removeRunData } from "./run-data.ts";
import { BUNDLES_ROOT, buildBundles, removeOldFolders } from "./service-bundles.ts";
import { compileCache, stackEnv, startStack } from "./stack.ts";
import { startSlotServer } from "./stack-slots.ts";

// The page tests drive Debian's Chromium, its headless shell where installed (test/support/chromium-path.ts):
// the shell is installed here when neither is there and we may (root); else they skip, saying why.
if (!process.env.CHROMIUM_PATH && !existsSync(chromiumPath()) && process.getuid?.() === 0) {
  process.stderr.write(
    "Installing Chromium for the browser tests (apt-get install chromium-headless-shell)...\n",
  );
  const apt = (args: string[]) =>
    spawnSync("apt-get", args, {
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  if (
    apt(["update", "-qq"]).status !== 0 ||
    apt(["install", "-y", "-qq", "chromium-headless-shell"]).status !== 0
  ) {
    process.stderr.write("Chromium could not be installed: the browser tests will be skipped.\n");
  }
}

const deps = await ensureDependencies({
  DATABASE_URL: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  NATS_URL: process.env.NATS_URL ?? "nats://127.0.0.1:4222",
});
Object.assign(process.env, deps.urls);

const suffix = `${Date.now().toString(36)}${process.pid.toString(36)}`;
// Private stacks name their databases and namespaces after the run (test/support/test-database.ts).
process.env.HB_TEST_RUN = suffix;
const server = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
const base = new URL(server);
base.pathname = `/hb_test_${suffix}`;
const ns = `t${suffix}`;
// The failed tests with their errors, printed at the very end (scripts/test-failures.ts).
const failuresFile = path.join(os.tmpdir(), `hb-test-failures-${suffix}.txt`);
process.env.HB_NS = ns;
process.env.LOG_LEVEL ??= "warn";
// The simulator runs fast in tests.
process.env.SIM_BUILD_MS ??= "300";
process.env.SIM_ACTION_MS ??= "200";
process.env.SIM_REINSTALL_MS ??= "300";
// Tests that need a failed build name it by hostname ("web-fail-1"); off outside tests.
process.env.SIM_FAILURES ??= "1";
// Billing's background passes, once a second: a paid order wakes the provisioner itself, and a
// pass costs every stack alive some CPU (at 100 and 200 ms they were most of an idle stack's).
process.env.PROVISIONER_INTERVAL_MS ??= "1000";
process.env.HOURLY_CHARGE_INTERVAL_MS ??= "1000";
// Compute's usage sampling pass: every 2 s rather than every minute, so a test sees readings.
process.env.USAGE_SAMPLE_MS ??= "2000";
// Webhooks: a fast pass and a short deadline. Tests register their receivers' 127.0.0.1:<port>
// as allowed destinations of the programme settings before they save a URL.
process.env.WEBHOOK_PASS_INTERVAL_MS ??= "300";
process.env.WEBHOOK_TIMEOUT_MS ??= "1500";
// The webhook event stream sends its heartbeat comments twice a second in tests.
process.env.STREAM_HEARTBEAT_MS ??= "500";
// An open portal console checks its session three times a second, so sign-out tests end soon.
process.env.CONSOLE_SESSION_CHECK_MS ??= "300";
// Every test file refuses keys from 127.0.0.1 on the shared gateway: its slow-down of failed
// authentication would hold them all, so it is tested on a gateway of its own (auth-throttle.test.ts).
process.env.AUTH_FAILURES_FREE ??= "1000000";
// Portal passwords: scrypt at N=2^12 rather than 2^15, so sign-ins do not crowd the shared CPUs.
process.env.PASSWORD_HASH_COST ??= "12";
// PostgreSQL connections: the run stays within 60 beside a running `npm start` on a default server
// (100). Private stacks (inheriting this) hold 2 per service; the shared stack, which every test
// file uses at once, 4 per service (measured peaks with 5: 53 and 58 in two fresh-clone runs).
process.env.DB_POOL_MAX ??= "2";
// ...and a stack's idle connections close after a few seconds, so the run holds connections for the
// stacks at work, not for every stack alive (peaks of 58 and 61 were measured without it).
process.env.DB_IDLE_TIMEOUT_S ??= "5";
const sharedPoolMax = process.env.SHARED_DB_POOL_MAX ?? "4";

// Private stacks alive at once, across every test file (scripts/stack-slots.ts): with the shared
// stack's 18 connections and 10 per private stack, three keep the run under 60 whatever files
// happen to run side by side (58 was measured without the cap: replicas, a private stack and the
// NATS faults' stack at once).
const stackSlots = Number(process.env.HB_STACK_SLOTS ?? 3);
const slots = await startSlotServer(stackSlots);

const adminUrl = new URL(server);
adminUrl.pathname = "/postgres";
const admin = postgres(adminUrl.toString(), { max: 1, onnotice: () => {} });
const connections = watchConnections(admin, `hb_test_${suffix}`);

/**
 * A run stopped by a signal (Ctrl-C, `timeout`, a cancelled job) still removes what it made: the
 * tests are ended and the cleanup below runs, instead of the process dying with its databases,
 * streams and keys left behind (8 hb_test_* databases were found so after runs stopped that way).
 */
let interrupted: NodeJS.Signals | undefined;
let tests: ChildProcess | undefined;
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => {
    interrupted = signal;
    tests?.kill(signal);
  });

// Every stack of the run, the shared one and the private ones, runs the services as bundles
// (scripts/service-bundles.ts): a stack's start costs about 45% less CPU. HB_SERVICE_BUNDLES=0
// runs the source instead. In the checkout, so that what a bundle resolves at run time is found.
const bundles = process.env.HB_SERVICE_BUNDLES === "0" ? undefined : path.join(BUNDLES_ROOT, suffix);
if (bundles) process.env.HB_SERVICE_BUNDLES = bundles;
else delete process.env.HB_SERVICE_BUNDLES;

let code = 1;
try {
  await Promise.all([
    bundles ? buildBundles(bundles) : undefined,
    removeOldFolders(BUNDLES_ROOT),
    removeOldFolders(CONTRACT_CACHE_ROOT),
  ]);
  const { env, gatewayPort } = await stackEnv({ databaseUrl: base.toString(), ns });
  const stack = await startStack({
    env: { ...env, DB_POOL_MAX: sharedPoolMax },
    output: "pipe",
    gatewayPort,
  });
  try {
    code = interrupted ? 1 : await runTests(env, stack.gatewayUrl);
    if (code !== 0) {
      for (const [name, p] of stack.procs) {
        const tail = (p as { tail?: string[] }).tail;
        if (tail?.length)
          process.stderr.write(`\n--- last output of ${name} ---\n${tail.join("").slice(-4000)}\n`);
      }
    }
  } finally {
    await stack.stop();
  }
} catch (err) {
  process.stderr.write(`the test stack did not start: ${err instanceof Error ? err.message : String(err)}\n`);
} finally {
  const { peak, heldBy } = await connections.stop();
  process.stdout.write(
    `PostgreSQL connections held by this run at its peak: ${peak} (the suite's budget is 60)${heldBy ? `: ${heldBy}` : ""}\n`,
  );
  const capped = slots.stats();
  process.stdout.write(
    `Private stacks: at most ${capped.mostHeld} at once (cap ${stackSlots}); ${capped.waits} waited for one, the longest ${(capped.longestWaitMs / 1000).toFixed(1)} s\n`,
  );
  await slots.close();
  let digest = "";
  try {
    digest = readFileSync(failuresFile, "utf8");
    rmSync(failuresFile, { force: true });
  } catch {
    // No file: the tests never ran, and the stack's failure is printed above.
  }
  if (digest) process.stdout.write(digest);
  // Everything this run made, the shared stack's and every private stack's, also after a failure.
  await removeRunData(admin, { db: `hb_test_${suffix}`, ns }).catch((err: unknown) =>
    process.stderr.write(`cleanup failed: ${String(err)}\n`),
  );
  await admin.end({ timeout: 5 });
  if (bundles) rmSync(bundles, { recursive: true, force: true });
}
await deps.stop();
process.exit(code);

function runTests(env: Record<string, string>, gatewayUrl: string): Promise<number> {
  // `npm test -- <files> --test-name-pattern <regex>` runs only the matching tests of those files.
  const args = process.argv.slice(2);
  const namePatterns: string[] = [];
  for (let i = args.indexOf("--test-name-pattern"); i !== -1; i = args.indexOf("--test-name-pattern")) {
    namePatterns.push(...args.splice(i, 2).slice(1));
  }
  const patterns = args.length
    ? args
    : [
        "packages/*/src/**/*.test.ts",
        "services/*/src/**/*.test.ts",
        "scripts/**/*.test.ts",
        "test/**/*.test.ts",
      ];
  const files = [
    ...new Set(patterns.flatMap((p) => globSync(p, { exclude: (f) => f.includes("node_modules") }))),
  ];
  return new Promise<number>((resolve) => {
    const child = spawn(
      process.execPath,
      // hb-source: the workspace's SDK is imported from its TypeScript source, as the typecheck reads it.
      ["--conditions=hb-source", "scripts/run-tests.ts", ...files],
      {
        stdio: "inherit",
        // The test files' processes keep their compiled modules on disk as the services do: a
        // hundred processes each compiling the same helpers and contracts again is CPU the run lacks.
        env: {
          NODE_COMPILE_CACHE: compileCache,
          ...process.env,
          ...env,
          GATEWAY_URL: gatewayUrl,
          HB_STACK_SLOTS_URL: slots.url,
          HB_TEST_NAME_PATTERNS: JSON.stringify(namePatterns),
          HB_TEST_FAILURES_FILE: failuresFile,
        },
      },
    );
    tests = child;
    child.on("exit", (c) => resolve(c ?? 1));
  });
}

/**
 * Samples the connections to this run's databases (the shared stack's and the private stacks',
 * which all start with `prefix`) four times a second; `stop` resolves to the largest count seen and
 * what held them then: by stack (the shared one, or a private stack's label) and by holder (a
 * service's schema, which it names as its application_name, or "tests" for a test's own).
 */
function watchConnections(sql: postgres.Sql, prefix: string) {
  let peak = 0;
  let heldBy = "";
  let stopped = false;
  const sample = async () => {
    while (!stopped) {
      const rows = await sql<{ datname: string; holder: string; n: number }[]>`
        select datname, case when application_name in ('', 'postgres.js') then 'tests' else application_name end as holder, count(*)::int as n
        from pg_stat_activity where left(datname, ${prefix.length}) = ${prefix}
        group by 1, 2`.catch(() => []);
      const total = rows.reduce((sum, r) => sum + r.n, 0);
      if (total > peak) {
        peak = total;
        heldBy = describeHolders(rows, prefix);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const running = sample();
  return {
    stop: async () => {
      stopped = true;
      await running;
      return { peak, heldBy };
    },
  };
}

/** "shared 17 (auth 4, billing 5, ...); kills 9 (...)": a private stack by its label, largest first. */
function describeHolders(rows: { datname: string; holder: string; n: number }[], prefix: string): string {
  const stacks = new Map<string, Map<string, number>>();
  for (const r of rows) {
    // Private stacks are `<prefix>_<label><8 hex>` (test/support/test-database.ts).
    const label = r.datname === prefix ? "shared" : r.datname.slice(prefix.length + 1, -8) || r.datname;
    const holders = stacks.get(label) ?? new Map<string, number>();
    holders.set(r.holder, (holders.get(r.holder) ?? 0) + r.n);
    stacks.set(label, holders);
  }
  const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  return [...stacks]
    .sort((a, b) => sum(b[1]) - sum(a[1]))
    .map(
      ([label, holders]) =>
        `${label} ${sum(holders)} (${[...holders]
          .sort()
          .map(([h, n]) => `${h} ${n}`)
          .join(", ")})`,
    )
    .join("; ");
}
