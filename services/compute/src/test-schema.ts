/**
 * compute's migrations applied in a schema of a test's own on the test server (the running compute
 * service never sees it), for tests of compute's SQL; dropped with `drop()`.
 */
import { connectDb, createLogger, migrate, type Sql } from "@hb/platform";

export interface TestSchema {
  sql: Sql;
  schema: string;
  drop(): Promise<void>;
}

export async function migratedSchema(label: string, max = 2): Promise<TestSchema> {
  const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const schema = `compute_${label}_test_${process.pid}_${Date.now().toString(36)}`;
  const sql = connectDb(url, schema, max);
  await migrate(
    sql,
    schema,
    new URL("./db/migrations", import.meta.url).pathname,
    createLogger("test", "error"),
  );
  return {
    sql,
    schema,
    drop: async () => {
      await sql.unsafe(`drop schema if exists "${schema}" cascade`);
      await sql.end({ timeout: 5 });
    },
  };
}
