/**
 * `node scripts/service-records-backfill.ts`: writes billing's record of every service as a
 * service.record_changed event, so compute's copy (the VPS and dedicated pages) holds every
 * service. Run once when compute's service_records table is first deployed; safe to run again
 * (compute keeps the newest record of each service). Needs DATABASE_URL (billing's database, as
 * billing's role or the operator) and HB_NS (the namespace the services publish under).
 */
import { connectDb, createLogger } from "@hb/platform";
import { recordEveryService } from "../services/billing/src/service-records.ts";

const url = process.env.DATABASE_URL;
const ns = process.env.HB_NS;
if (!url || !ns) {
  process.stderr.write("DATABASE_URL and HB_NS are required\n");
  process.exit(2);
}
const log = createLogger("service-records-backfill");
const sql = connectDb(url, "billing", 2);
try {
  const n = await recordEveryService(sql, ns);
  log.info("service records written; billing's outbox relay publishes them", { services: n });
} finally {
  await sql.end({ timeout: 5 });
}
