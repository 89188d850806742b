import { z } from "zod";
import { productionSecretProblems } from "./production-secrets.ts";
import { tlsConfig } from "./service-identity.ts";
import { testSwitchProblems } from "./test-switches.ts";

/**
 * Reads configuration from the environment once, at start-up. A bad or missing variable stops
 * the process with a message naming it, instead of failing later on first use. With
 * NODE_ENV=production, a secret left at a placeholder or too short to be random stops it too, and
 * so does any test switch (test-switches.ts) that is on. Messages name settings, never values.
 */
export function loadConfig<T extends z.ZodRawShape>(shape: T, env: NodeJS.ProcessEnv = process.env) {
  const result = z.object(shape).safeParse(env);
  if (!result.success) {
    throw configError(result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`));
  }
  if (env.NODE_ENV === "production") {
    const problems = [...productionSecretProblems(result.data), ...testSwitchProblems(env)];
    if (problems.length > 0) throw configError(problems.map((p) => `${p} (NODE_ENV=production)`));
  }
  return result.data;
}

const configError = (lines: string[]) =>
  new ConfigError(`Invalid configuration:\n${lines.map((l) => `  ${l}`).join("\n")}`);

class ConfigError extends Error {}

/** The variables every service shares; each service adds its own. */
export const commonConfig = {
  DATABASE_URL: z.string().url().default("postgres://postgres@127.0.0.1:5432/hosting"),
  /**
   * The directory of PostgreSQL's Unix socket (Debian's: /var/run/postgresql). Set, a DATABASE_URL
   * naming this host (127.0.0.1, ::1, localhost) connects through the socket there for its port,
   * where the server has one, instead of over loopback TCP (db.ts, `localSocketPath`). The launcher
   * sets it when a service's role may connect there (scripts/stack.ts, one probe); unset (the
   * default here), TCP as the URL says.
   */
  DATABASE_SOCKET_DIR: z.string().default(""),
  REDIS_URL: z.string().url().default("redis://127.0.0.1:6379"),
  NATS_URL: z.string().default("nats://127.0.0.1:4222"),
  /** Namespace for stream names, subjects and Redis keys, so two runs on one machine never collide. */
  HB_NS: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,30}$/, "lower-case letters, digits and _, starting with a letter")
    .default("hb"),
  /** Connections per process; several stacks share one PostgreSQL in tests. */
  DB_POOL_MAX: z.coerce.number().int().min(1).max(100).default(8),
  /**
   * Seconds an unused pooled connection is kept (0: for good). Tests set a few seconds, so the
   * many stacks of a run hold connections only while they use them.
   */
  DB_IDLE_TIMEOUT_S: z.coerce.number().int().min(0).max(3600).default(0),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
  RPC_TRANSPORT: z.enum(["grpc-js", "connect"]).default("grpc-js"),
  RPC_TIMEOUT_MS: z.coerce.number().int().positive().default(5000),
  AUTH_ADDR: z.string().default("127.0.0.1:50051"),
  COMPUTE_ADDR: z.string().default("127.0.0.1:50052"),
  BILLING_ADDR: z.string().default("127.0.0.1:50053"),
  WEBHOOKS_ADDR: z.string().default("127.0.0.1:50054"),
  ...tlsConfig,
  /**
   * When set, the health service alone is also served here without TLS, for Kubernetes' gRPC
   * probes (the kubelet cannot present a client certificate). Unset outside Kubernetes.
   */
  HEALTH_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /** Auth's alone (its config replaces this entry): any other service holding it is misdeployed. */
  KEY_PEPPER: z
    .never({
      error: "only the auth service may hold the key pepper; remove it from this service's environment",
    })
    .optional(),
};

/** Host:port a service listens on for RPC. */
export function listenPort(addr: string): number {
  const port = Number(addr.slice(addr.lastIndexOf(":") + 1));
  if (!Number.isInteger(port)) throw new ConfigError(`Invalid address ${addr}: no port`);
  return port;
}
