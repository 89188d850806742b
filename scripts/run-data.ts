/**
 * What `npm test` leaves behind when it ends, removed: everything its stacks made is named with the
 * run's id (scripts/test.ts, test/support/test-database.ts), so one prefix per store finds it all,
 * also after a failure half-way.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { Redis } from "ioredis";
import type postgres from "postgres";

/**
 * Removes what a run or one of its stacks made, by the prefixes all its names start with: the
 * databases named `db...`, and under the namespace `ns` its streams (`NS...`, platform streams())
 * and Redis keys (the key tables' snapshots have no expiry; limits and cool-downs expire anyway).
 * `sql` is a connection to the server's `postgres` database.
 */
export async function removeRunData(sql: postgres.Sql, prefix: { db: string; ns: string }) {
  const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { maxRetriesPerRequest: 1 });
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix.ns}*`, "COUNT", 1000);
      if (keys.length > 0) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
  const dbs = await sql<{ datname: string }[]>`
    select datname from pg_database where left(datname, ${prefix.db.length}) = ${prefix.db}`;
  for (const { datname } of dbs) await sql.unsafe(`drop database if exists "${datname}" with (force)`);
  const streamPrefix = prefix.ns.toUpperCase();
  const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
  try {
    const jsm = await jetstreamManager(nc);
    for await (const s of jsm.streams.list()) {
      if (s.config.name.startsWith(streamPrefix)) await jsm.streams.delete(s.config.name);
    }
  } finally {
    await nc.close();
  }
}
