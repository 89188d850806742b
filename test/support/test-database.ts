/**
 * Names for a private stack's database and namespace that carry this test run's id (HB_TEST_RUN,
 * set by scripts/test.ts): the runner counts the run's PostgreSQL connections by it and removes
 * whatever a test that failed half-way left behind (databases, NATS streams).
 */
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { removeRunData } from "../../scripts/run-data.ts";

const run = () => process.env.HB_TEST_RUN ?? "x";

/** A database URL on the test server, `hb_test_<run>_<label><random>`; at most 63 characters. */
export function testDatabaseUrl(label: string): URL {
  const url = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
  const name = `hb_test_${run()}_${label.toLowerCase().replace(/[^a-z0-9]/g, "")}`.slice(0, 50);
  url.pathname = `/${name}${randomBytes(4).toString("hex")}`;
  return url;
}

/** A namespace (stream names, Redis keys) of this run: `t<run><random>`, at most 30 characters. */
export function testNamespace(): string {
  return `t${run()}${randomBytes(4).toString("hex")}`.toLowerCase().slice(0, 30);
}

/**
 * Removes what a private stack made: its database, NATS streams and Redis keys. Called when the stack
 * closes, and when it fails to start, so a failed start leaves nothing behind either.
 */
export async function removeStackData(db: URL, ns: string): Promise<void> {
  const admin = new URL(db);
  admin.pathname = "/postgres";
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
  try {
    await removeRunData(sql, { db: db.pathname.slice(1), ns });
  } finally {
    await sql.end({ timeout: 5 });
  }
}
