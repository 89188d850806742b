/**
 * Applies the services' database migrations and exits: `node scripts/migrate.ts [service ...]`
 * (all four when none is named). The Kubernetes migration Job runs it before a rollout; the
 * services still migrate at start-up, under the same advisory lock, so running both is harmless.
 * It runs as the operator's database user and then hands each schema, with everything in it, to
 * the service's own role (hb_<service>, made by the operator beforehand: deploy/k8s/README.md),
 * the only role that service connects as.
 */
import path from "node:path";
import { commonConfig, connectDb, createLogger, loadConfig, migrate } from "@hb/platform";
import { handOverSchemas, roleOf } from "./db-roles.ts";

const SERVICES = ["auth", "compute", "billing", "webhooks"] as const;
type Service = (typeof SERVICES)[number];
const isService = (name: string): name is Service => (SERVICES as readonly string[]).includes(name);

const log = createLogger("migrate");
const named = process.argv.slice(2);
const unknown = named.filter((n) => !isService(n));
if (unknown.length > 0) {
  process.stderr.write(`unknown service ${unknown.join(", ")}; one of ${SERVICES.join(", ")}\n`);
  process.exit(2);
}

// The database alone: the Job holds no service's certificate or secret.
const cfg = loadConfig({ DATABASE_URL: commonConfig.DATABASE_URL });
const root = path.join(import.meta.dirname, "..");
try {
  for (const service of named.length > 0 ? named.filter(isService) : SERVICES) {
    const sql = connectDb(cfg.DATABASE_URL, service, 1);
    try {
      await migrate(sql, service, path.join(root, "services", service, "src/db/migrations"), log);
    } finally {
      await sql.end({ timeout: 5 });
    }
    await handOverSchemas(cfg.DATABASE_URL, [service]);
    log.info("schema up to date", { schema: service, owner: roleOf(service) });
  }
} catch (err) {
  log.error("migration failed", { err });
  process.exit(1);
}
