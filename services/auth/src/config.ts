import { commonConfig, loadConfig } from "@hb/platform";
import { z } from "zod";

export const authConfigShape = {
  ...commonConfig,
  /** Server-side pepper for key hashes. The development default is refused in production. */
  KEY_PEPPER: z.string().min(16, "must be at least 16 characters").default("development-pepper-change-me"),
  NODE_ENV: z.string().default("development"),
  REQUEST_LOG_RETENTION_DAYS: z.coerce.number().int().positive().default(30),
};

export type AuthConfig = ReturnType<typeof loadAuthConfig>;

export function loadAuthConfig() {
  const cfg = loadConfig(authConfigShape);
  if (cfg.NODE_ENV === "production" && cfg.KEY_PEPPER === authConfigShape.KEY_PEPPER.parse(undefined)) {
    throw new Error("Invalid configuration:\n  KEY_PEPPER: must be set in production");
  }
  return cfg;
}
