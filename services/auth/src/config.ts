import { commonConfig, loadConfig } from "@hb/platform";
import { z } from "zod";

const authConfigShape = {
  ...commonConfig,
  /**
   * Server-side pepper for key hashes. The development default, or any placeholder or value
   * shorter than 32 characters, is refused in production (loadConfig).
   */
  KEY_PEPPER: z.string().min(16, "must be at least 16 characters").default("development-pepper-change-me"),
  NODE_ENV: z.string().default("development"),
  REQUEST_LOG_RETENTION_DAYS: z.coerce.number().int().positive().default(30),
  /** Portal and admin sign-in: failures for one address before it is locked, and for how long. */
  SIGN_IN_MAX_FAILURES: z.coerce.number().int().min(1).max(100).default(5),
  SIGN_IN_LOCK_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  /**
   * Failed sign-ins from one source address (an IPv6 /64) in its window, whatever the accounts:
   * beyond them every attempt is refused before its password is checked.
   */
  SIGN_IN_SOURCE_MAX_FAILURES: z.coerce.number().int().min(1).max(1_000_000).default(30),
  SIGN_IN_SOURCE_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(300),
  /** Sign-ins of one source checked at once (each holds scrypt's 32 MiB); more are refused 429. */
  SIGN_IN_SOURCE_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(8),
  SESSION_SECONDS: z.coerce.number().int().min(60).max(604_800).default(28_800),
  /** log2 of scrypt's N for new password hashes (15: 32 MiB per hash). */
  PASSWORD_HASH_COST: z.coerce.number().int().min(10).max(20).default(15),
  /**
   * Gateway key table (docs/architecture.md): an acknowledgement keeps a gateway replica serving
   * keyed requests this long; heartbeats ask for one this often; a change waits this long for
   * every replica before it gives the late ones up (and then waits out their lease).
   */
  KEY_LEASE_MS: z.coerce.number().int().min(500).max(600_000).default(10_000),
  KEY_HEARTBEAT_MS: z.coerce.number().int().min(50).max(60_000).default(1_000),
  KEY_ACK_WAIT_MS: z.coerce.number().int().min(50).max(600_000).default(3_000),
  PASSWORD_LINK_HOURS: z.coerce.number().int().min(1).max(720).default(72),
};

export type AuthConfig = ReturnType<typeof loadAuthConfig>;

export const loadAuthConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(authConfigShape, env);
