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
  return postgres(serviceDbUrl(databaseUrl, schema), { max: 1, onnotice: () => {} });
}
