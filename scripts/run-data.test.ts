import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { Redis } from "ioredis";
import postgres from "postgres";
import { removeRunData } from "./run-data.ts";

describe("removing a test run's data", () => {
  const id = `rd${randomBytes(4).toString("hex")}`;
  const other = `${id}x`.replace(/^rd/, "ro"); // another run's names: kept
  const server = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
  server.pathname = "/postgres";
  let sql: postgres.Sql;
  let redis: Redis;
  let nc: NatsConnection;

  before(async () => {
    sql = postgres(server.toString(), { max: 1, onnotice: () => {} });
    redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
  });
  after(async () => {
    await sql.unsafe(`drop database if exists "hb_test_${other}"`);
    await redis.del(`t${other}:keys:base`);
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(`T${other.toUpperCase()}_EVENTS`).catch(() => false);
    await sql.end();
    redis.disconnect();
    await nc.close();
  });

  it("drops the run's databases, streams and Redis keys, and nothing of another run", async () => {
    const jsm = await jetstreamManager(nc);
    for (const run of [id, other]) {
      await sql.unsafe(`create database "hb_test_${run}"`);
      await redis.set(`t${run}:keys:base`, "snapshot");
      await jsm.streams.add({ name: `T${run.toUpperCase()}_EVENTS`, subjects: [`t${run}.events.>`] });
    }
    await removeRunData(sql, { db: `hb_test_${id}`, ns: `t${id}` });
    const dbs = await sql<{ datname: string }[]>`
      select datname from pg_database where datname in (${`hb_test_${id}`}, ${`hb_test_${other}`})`;
    assert.deepEqual(
      dbs.map((d) => d.datname),
      [`hb_test_${other}`],
    );
    assert.deepEqual(
      await redis.exists(`t${id}:keys:base`, `t${other}:keys:base`),
      1,
      "only the other run's key is left",
    );
    assert.equal(await redis.exists(`t${other}:keys:base`), 1);
    const names: string[] = [];
    for await (const s of jsm.streams.list()) names.push(s.config.name);
    assert.ok(!names.includes(`T${id.toUpperCase()}_EVENTS`));
    assert.ok(names.includes(`T${other.toUpperCase()}_EVENTS`));
  });
});
