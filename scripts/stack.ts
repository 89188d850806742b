/**
 * Starts the five services as separate processes and waits until each answers: gRPC health for
 * the backends, /readyz for the gateway (its key table in step with auth). Used by `npm start`, `npm test` and `npm run bench`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { Health, HealthCheckResponse_ServingStatus } from "@hb/contracts/grpc/health/v1/health_pb";
import { ensureDatabase, loadTlsIdentity, rpcClient, socketAccepts } from "@hb/platform";
import { bundleOr } from "./bundle-file.ts";
import { ensureServiceRoles } from "./db-roles.ts";
import { certFiles, ensureDevCerts } from "./dev-certs.ts";
import { reservePorts } from "./ports.ts";
import { serviceEnv } from "./service-env.ts";

const root = path.resolve(import.meta.dirname, "..");

export const SERVICES = [
  { name: "auth", addrEnv: "AUTH_ADDR" },
  { name: "compute", addrEnv: "COMPUTE_ADDR" },
  { name: "billing", addrEnv: "BILLING_ADDR" },
  { name: "webhooks", addrEnv: "WEBHOOKS_ADDR" },
] as const;

/** Every process of a stack: the gateway and the services behind it. */
export const STACK_PROCESSES = ["gateway", ...SERVICES.map((s) => s.name)] as const;

export interface StackOptions {
  env: Record<string, string>;
  /** Print service logs to this process's stdout (npm start) or keep them (tests). */
  output: "inherit" | "pipe" | "ignore";
  gatewayPort: number;
  /**
   * Start a service again when it exits on its own (npm start): one crash must not take the
   * platform down. Restarts back off from 1 s to 30 s while a service keeps failing.
   */
  supervise?: boolean;
  /** Told about every unexpected exit and restart (npm start prints it). */
  onRestart?: (
    name: string,
    exit: { code: number | null; signal: NodeJS.Signals | null },
    delayMs: number,
  ) => void;
  /** Changes a service's database URL (a test counting its statements puts a proxy in front). */
  dbUrlOf?: (service: string, url: string) => string;
}

export interface Stack {
  env: Record<string, string>;
  gatewayUrl: string;
  procs: Map<string, ChildProcess>;
  stop(): Promise<void>;
  /** Kills one service hard and starts it again (fault tests). */
  restart(name: string, signal?: NodeJS.Signals): Promise<void>;
}

/** A port for a private server or service, reserved for this process (scripts/ports.ts). */
export async function freePort(): Promise<number> {
  const [port] = await reservePorts(1);
  return port;
}

/**
 * Node's compile cache keeps each module's type-stripped, compiled form on disk: a service whose
 * modules are all cached never loads the TypeScript stripper (a WebAssembly module, about 15 MB of
 * RSS per process, measured in docs/benchmarks.md) and starts faster. The first start fills it.
 */
export const compileCache =
  process.env.NODE_COMPILE_CACHE || path.join(root, "node_modules", ".cache", "node-compile");

/**
 * Memory settings of every service process (the image sets the same, deploy/Dockerfile), measured
 * in docs/benchmarks.md: a young generation capped at 4 MB semi-spaces (V8 lets it grow to 32 MB
 * during start-up and keeps it committed while idle), two glibc malloc arenas instead of one per
 * thread (the libuv and V8 worker threads each kept an arena's pages), and an old generation
 * capped at 256 MB. The cap is not there to be reached (the largest live heap measured, with
 * the 200-row VPS page at 50 connections, is 53 MB): below V8's default limit for this
 * machine (about 4 GB) V8 lets the old generation grow to about 1.3 times the live heap between
 * full collections instead of up to 4 times, and uncollected garbage was what took the services
 * from 120 to 250 MB under load. The pages V8 takes stay resident after it frees them.
 */
export const SERVICE_NODE_ARGS = "--max-semi-space-size=4 --max-old-space-size=256";
export const SERVICE_MEMORY_ENV = { MALLOC_ARENA_MAX: "2" } as const;
// HB_SERVICE_NODE_ARGS (space-separated; empty for none) replaces the flags, to measure without them.
// Read at each launch, so a benchmark can compare settings within one run.
const serviceNodeArgs = () =>
  (process.env.HB_SERVICE_NODE_ARGS ?? SERVICE_NODE_ARGS).split(" ").filter(Boolean);

const source = (name: string) => path.join(root, "services", name, "src", "main.ts");
/** What a service runs: its main.ts, or its bundle (scripts/service-bundles.ts) in a test run. */
const entry = (name: string) => bundleOr(name, source(name));
const availableServices = () => SERVICES.filter((s) => existsSync(source(s.name)));

// Generous: on two shared cores a dozen private stacks may start at once in the test run.
async function waitFor(what: string, check: () => Promise<boolean>, proc: ChildProcess, timeoutMs = 90_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (proc.exitCode !== null) throw new Error(`${what} exited with code ${proc.exitCode} during start-up`);
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not become ready within ${timeoutMs} ms`);
}

/** Where Debian's PostgreSQL keeps its Unix socket. */
const DEBIAN_PG_SOCKET_DIR = "/var/run/postgresql";

export async function startStack(opts: StackOptions): Promise<Stack> {
  const env = { ...opts.env };
  env.HB_CERTS_DIR ??= await ensureDevCerts();
  await ensureDatabase(env.DATABASE_URL);
  // Each backend connects as its own role, with rights on its own schema only.
  const dbUrls = await ensureServiceRoles(
    env.DATABASE_URL,
    availableServices().map((s) => s.name),
  );
  // A PostgreSQL on this host is reached through its Unix socket where the services' roles may
  // connect there (db.ts, localSocketPath); DATABASE_SOCKET_DIR in the environment, even empty,
  // decides instead.
  const probeUrl = Object.values(dbUrls)[0];
  if (
    process.env.DATABASE_SOCKET_DIR === undefined &&
    env.DATABASE_SOCKET_DIR === undefined &&
    probeUrl &&
    (await socketAccepts(probeUrl, DEBIAN_PG_SOCKET_DIR))
  )
    env.DATABASE_SOCKET_DIR = DEBIAN_PG_SOCKET_DIR;
  const envOf = (name: string) => {
    const own = serviceEnv(name, { ...process.env, ...env, ...certFiles(env.HB_CERTS_DIR, name) });
    // The plaintext health-only port Kubernetes probes use (HEALTH_PORT), here too so it is tested.
    const healthPort = env[`${name.toUpperCase()}_HEALTH_PORT`];
    if (healthPort) own.HEALTH_PORT = healthPort;
    if (name === "gateway") {
      // The pages' own identities, the admin panel's and the portal's (services/gateway/src/clients.ts).
      const panel = certFiles(env.HB_CERTS_DIR, "admin-panel");
      own.ADMIN_PANEL_TLS_CERT = panel.TLS_CERT;
      own.ADMIN_PANEL_TLS_KEY = panel.TLS_KEY;
      const portal = certFiles(env.HB_CERTS_DIR, "portal");
      own.PORTAL_TLS_CERT = portal.TLS_CERT;
      own.PORTAL_TLS_KEY = portal.TLS_KEY;
    }
    if (dbUrls[name]) own.DATABASE_URL = opts.dbUrlOf?.(name, dbUrls[name]) ?? dbUrls[name];
    else delete own.DATABASE_URL; // the gateway has no database
    return own;
  };
  const procs = new Map<string, ChildProcess>();
  const nodeBin = process.execPath;
  let stopping = false;
  const failures = new Map<string, { count: number; since: number }>();

  const supervise = (name: string, proc: ChildProcess) => {
    proc.once("exit", (code, signal) => {
      if (stopping || procs.get(name) !== proc) return; // stopped, or replaced by restart()
      // A service that ran for a minute is healthy again: its back-off starts over.
      const previous = failures.get(name);
      const count = previous && Date.now() - previous.since < 60_000 ? previous.count + 1 : 1;
      failures.set(name, { count, since: Date.now() });
      const delayMs = Math.min(30_000, 1000 * 2 ** (count - 1));
      opts.onRestart?.(name, { code, signal }, delayMs);
      setTimeout(() => {
        if (!stopping && procs.get(name) === proc) launch(name);
      }, delayMs).unref();
    });
  };

  const launch = (name: string) => {
    const proc = spawn(nodeBin, [...serviceNodeArgs(), entry(name)], {
      cwd: root,
      // Each process presents its own certificate and sees no other service's secrets.
      env: { NODE_COMPILE_CACHE: compileCache, ...SERVICE_MEMORY_ENV, ...envOf(name) },
      stdio: ["ignore", opts.output, opts.output === "pipe" ? "pipe" : opts.output],
    });
    if (opts.output === "pipe") {
      // Keep the last lines of each service for diagnosis when a test fails.
      const tail: string[] = [];
      const keep = (chunk: Buffer) => {
        tail.push(chunk.toString());
        if (tail.length > 200) tail.shift();
      };
      proc.stdout?.on("data", keep);
      proc.stderr?.on("data", keep);
      (proc as ChildProcess & { tail?: string[] }).tail = tail;
    }
    procs.set(name, proc);
    if (opts.supervise) supervise(name, proc);
    return proc;
  };

  const health = async (name: string, addr: string, proc: ChildProcess) => {
    // The launcher asks with the service's own certificate: health is open to any identity of the CA.
    const tls = loadTlsIdentity(certFiles(env.HB_CERTS_DIR, name));
    const { client, close } = rpcClient("grpc-js", Health, addr, { timeoutMs: 1000, tls });
    try {
      await waitFor(
        name,
        async () => {
          const r = await client.check({});
          return r.status === HealthCheckResponse_ServingStatus.SERVING;
        },
        proc,
      );
    } finally {
      close();
    }
  };

  const stop = async () => {
    stopping = true;
    const all = [...procs.values()].filter((p) => p.exitCode === null && p.signalCode === null);
    await Promise.all(
      all.map(
        (p) =>
          new Promise<void>((resolve) => {
            const t = setTimeout(() => {
              p.kill("SIGKILL");
              resolve();
            }, 10_000);
            p.once("exit", () => {
              clearTimeout(t);
              resolve();
            });
            p.kill("SIGTERM");
          }),
      ),
    );
  };

  try {
    // auth first: it owns settings the others may ask for; the rest start in parallel.
    const services = availableServices();
    const [first, ...rest] = services;
    await health(first.name, env[first.addrEnv], launch(first.name));
    await Promise.all(rest.map((s) => health(s.name, env[s.addrEnv], launch(s.name))));
    const gateway = launch("gateway");
    const gatewayUrl = `http://127.0.0.1:${opts.gatewayPort}`;
    await waitFor("gateway", async () => (await fetch(`${gatewayUrl}/readyz`)).ok, gateway);
    return {
      env,
      gatewayUrl,
      procs,
      stop,
      restart: async (name, signal = "SIGKILL") => {
        const p = procs.get(name);
        // Out of the map first: the supervisor (if any) leaves a process it no longer tracks alone,
        // so a deliberate restart is neither reported nor counted toward its back-off.
        procs.delete(name);
        if (p && p.exitCode === null) {
          await new Promise<void>((resolve) => {
            p.once("exit", () => resolve());
            p.kill(signal);
          });
        }
        const proc = launch(name);
        if (name === "gateway")
          await waitFor("gateway", async () => (await fetch(`${gatewayUrl}/readyz`)).ok, proc);
        else {
          const s = SERVICES.find((x) => x.name === name)!;
          await health(name, env[s.addrEnv], proc);
        }
      },
    };
  } catch (err) {
    for (const [name, p] of procs) {
      const tail = (p as ChildProcess & { tail?: string[] }).tail;
      if (tail?.length) process.stderr.write(`--- ${name} output ---\n${tail.join("")}\n`);
    }
    await stop();
    throw err;
  }
}

/** Environment for a stack on free ports, under its own database and namespace. */
export async function stackEnv(base: {
  databaseUrl: string;
  ns: string;
}): Promise<{ env: Record<string, string>; gatewayPort: number }> {
  const ports = await reservePorts(1 + SERVICES.length * 3 + 1);
  const next = () => ports.pop()!;
  const gatewayPort = next();
  const env: Record<string, string> = {
    DATABASE_URL: base.databaseUrl,
    HB_NS: base.ns,
    PORT: String(gatewayPort),
    PUBLIC_URL: `http://127.0.0.1:${gatewayPort}`,
  };
  for (const s of SERVICES) env[s.addrEnv] = `127.0.0.1:${next()}`;
  // Each process serves /metrics on a port of its own (packages/platform/src/observability.ts).
  for (const name of STACK_PROCESSES) env[`${name.toUpperCase()}_METRICS_PORT`] = String(next());
  for (const s of SERVICES) env[`${s.name.toUpperCase()}_HEALTH_PORT`] = String(next());
  env.HB_CERTS_DIR = await ensureDevCerts();
  for (const k of ["REDIS_URL", "NATS_URL", "LOG_LEVEL", "RPC_TRANSPORT", "KEY_PEPPER"]) {
    if (process.env[k]) env[k] = process.env[k]!;
  }
  return { env, gatewayPort };
}
