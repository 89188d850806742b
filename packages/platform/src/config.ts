import { z } from "zod";

/**
 * Reads configuration from the environment once, at start-up. A bad or missing variable stops
 * the process with a message naming it, instead of failing later on first use.
 */
export function loadConfig<T extends z.ZodRawShape>(shape: T, env: NodeJS.ProcessEnv = process.env) {
  const result = z.object(shape).safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  return result.data;
}

export class ConfigError extends Error {}

/** The variables every service shares; each service adds its own. */
export const commonConfig = {
  DATABASE_URL: z.string().url().default("postgres://postgres@127.0.0.1:5432/hosting"),
  REDIS_URL: z.string().url().default("redis://127.0.0.1:6379"),
  NATS_URL: z.string().default("nats://127.0.0.1:4222"),
  /** Namespace for stream names, subjects and Redis keys, so two runs on one machine never collide. */
  HB_NS: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,30}$/, "lower-case letters, digits and _, starting with a letter")
    .default("hb"),
  /** Connections per process; several stacks share one PostgreSQL in tests. */
  DB_POOL_MAX: z.coerce.number().int().min(1).max(100).default(8),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
  RPC_TRANSPORT: z.enum(["grpc-js", "connect"]).default("grpc-js"),
  RPC_TIMEOUT_MS: z.coerce.number().int().positive().default(5000),
  AUTH_ADDR: z.string().default("127.0.0.1:50051"),
  COMPUTE_ADDR: z.string().default("127.0.0.1:50052"),
  BILLING_ADDR: z.string().default("127.0.0.1:50053"),
  WEBHOOKS_ADDR: z.string().default("127.0.0.1:50054"),
};

/** Host:port a service listens on for RPC. */
export function listenPort(addr: string): number {
  const port = Number(addr.slice(addr.lastIndexOf(":") + 1));
  if (!Number.isInteger(port)) throw new ConfigError(`Invalid address ${addr}: no port`);
  return port;
}
