export * from "./allow-list.ts";
export * from "./allowlist.ts";
export * from "./api-key.ts";
export * from "./backend-client.ts";
export * from "./config.ts";
export * from "./db.ts";
export * from "./enum-words.ts";
export * from "./errors.ts";
export * from "./ids.ts";
export * from "./iso-codes.ts";
export * from "./log.ts";
export * from "./metrics.ts";
export * from "./nats.ts";
export * from "./observability.ts";
export * from "./outbox.ts";
export * from "./permissions.ts";
export * from "./production-secrets.ts";
export * from "./request-context.ts";
export * from "./request-log.ts";
export * from "./retention.ts";
export * from "./rpc.ts";
export * from "./rpc-context.ts";
export * from "./service-identity.ts";
export * from "./shutdown.ts";
export * from "./tracing.ts";
export * from "./unavailable.ts";
// Redis (redis, cooldown, rate-window) is imported by path (@hb/platform/redis, ...): only the
// gateway and auth use it, and ioredis costs every other service resident memory.
