/**
 * The migration entry point the Kubernetes Job runs: it brings an empty database to every
 * service's current schema, and a second run changes nothing.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { ensureDatabase } from "@hb/platform";
import postgres from "postgres";
import { testDatabaseUrl } from "./support/test-database.ts";

const ROOT = path.join(import.meta.dirname, "..");
const SERVICES = ["auth", "compute", "billing", "webhooks"];
const server = process.env.DATABASE_URL;

const migrationFiles = (service: string) =>
  readdirSync(path.join(ROOT, "services", service, "src/db/migrations"))
    .filter((f) => /^\d+_.*\.sql$/.test(f))
    .sort();

describe("node scripts/migrate.ts", { skip: !server && "needs DATABASE_URL (npm test)" }, () => {
  const url = testDatabaseUrl("migrate");
  let sql: postgres.Sql;
  const migrate = (...args: string[]) =>
    promisify(execFile)(process.execPath, [path.join(ROOT, "scripts/migrate.ts"), ...args], {
      env: { ...process.env, DATABASE_URL: url.toString(), LOG_LEVEL: "info" },
    });

  before(async () => {
    await ensureDatabase(url.toString());
    sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
  });
  after(async () => {
    await sql?.end({ timeout: 5 });
    const admin = postgres(server!, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists "${url.pathname.slice(1)}" with (force)`);
    await admin.end({ timeout: 5 });
  });

  it("applies every service's migrations to an empty database, then finds nothing left to apply", async () => {
    await migrate();
    for (const service of SERVICES) {
      const rows = await sql.unsafe(`select name from "${service}".schema_migrations order by name`);
      assert.deepEqual(
        rows.map((r) => r.name),
        migrationFiles(service),
        service,
      );
    }
    // Each schema, and every table in it, belongs to its service's role alone.
    const owners = await sql`
      select n.nspname as schema, pg_get_userbyid(n.nspowner) as owner,
             array(select distinct pg_get_userbyid(c.relowner) from pg_class c where c.relnamespace = n.oid)::text[] as tables
      from pg_namespace n where n.nspname in ${sql(SERVICES)}`;
    assert.equal(owners.length, SERVICES.length);
    for (const o of owners) {
      assert.equal(o.owner, `hb_${o.schema}`, `schema ${o.schema}`);
      assert.deepEqual(o.tables, [`hb_${o.schema}`], `tables of ${o.schema}`);
    }
    const again = await migrate();
    assert.doesNotMatch(again.stdout, /migration applied/);
    assert.equal(again.stdout.match(/schema up to date/g)?.length, SERVICES.length);
  });

  it("refuses a service it does not know, with exit status 2", async () => {
    await assert.rejects(migrate("auth", "nope"), (err: { code?: number; stderr?: string }) => {
      assert.equal(err.code, 2);
      assert.match(err.stderr ?? "", /unknown service nope/);
      return true;
    });
  });
});
