/**
 * A connection as one service's own database role (hb_<schema>), for the rare test that must put
 * a service's table into a state no RPC reaches (a key aged past its expiry, a URL saved before
 * the rules changed). The role owns that schema and nothing else, so such a test can write into
 * the service it is about and never into another's.
 */
import postgres from "postgres";
import { serviceDbUrl } from "../../scripts/db-roles.ts";

export type Schema = "auth" | "billing" | "compute" | "webhooks";

export function serviceSql(schema: Schema, databaseUrl = process.env.DATABASE_URL) {
  if (!databaseUrl) throw new Error("DATABASE_URL is not set: run the tests through npm test");
  // Its connection closes when unused for a few seconds: a file sharing a process with others
  // (scripts/test-batch.ts) ends its pool only when the last of them ends.
  return postgres(serviceDbUrl(databaseUrl, schema), { max: 1, idle_timeout: 5, onnotice: () => {} });
}
