import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { eventually } from "../../../test/support/eventually.ts";
import { connectDb, type Sql } from "./db.ts";
import { createLogger } from "./log.ts";
import { startRetention } from "./retention.ts";

// Against the real PostgreSQL of `npm test`, in a schema of its own.
const schema = `retention_test_${process.pid}`;
const log = createLogger("retention-test", "error");

describe("retention", { skip: !process.env.DATABASE_URL && "needs DATABASE_URL (npm test)" }, () => {
  let sql: Sql;
  before(async () => {
    sql = connectDb(process.env.DATABASE_URL!, schema, 3);
    await sql.unsafe(`create schema if not exists "${schema}"`);
    await sql`create table events (id int primary key, created_at timestamptz not null)`;
    await sql`create table request_log (id bigserial primary key, at timestamptz not null)`;
  });
  after(async () => {
    await sql.unsafe(`drop schema "${schema}" cascade`);
    await sql.end({ timeout: 5 });
  });

  const ids = async (table: string) =>
    (await sql<{ id: number }[]>`select id::int from ${sql(table)} order by id`).map((r) => r.id);

  it("removes rows older than 30 days from every table in bounded batches, and keeps younger ones", async () => {
    await sql`insert into events select g, now() - make_interval(days => 31, secs => g) from generate_series(1, 12) g`;
    await sql`insert into events values (100, now() - interval '29 days 23 hours'), (101, now())`;
    await sql`insert into request_log (id, at) values (1, now() - interval '45 days'), (2, now() - interval '1 day')`;
    const logged: Record<string, unknown>[] = [];
    const recording = {
      ...log,
      info: (_msg: string, fields?: Record<string, unknown>) => logged.push(fields ?? {}),
    };
    const retention = startRetention(
      sql,
      [
        { table: "events", column: "created_at" },
        { table: "request_log", column: "at" },
      ],
      recording,
      { batchSize: 5, intervalMs: 3600_000 },
    );
    // The run at start does the work; a run asked for afterwards waits for it and finds nothing.
    assert.deepEqual(await retention.runOnce(), { events: 0, request_log: 0 });
    await retention.stop();
    assert.deepEqual(await ids("events"), [100, 101]);
    assert.deepEqual(await ids("request_log"), [2]);
    // 12 rows at 5 a statement: three statements, none of them holding more than 5 rows' locks.
    assert.deepEqual(logged, [
      { table: "events", rows: 12, statements: 3 },
      { table: "request_log", rows: 1, statements: 1 },
    ]);
  });

  it("skips rows another transaction holds instead of waiting for them, and takes them on a later run", async () => {
    await sql`delete from events`;
    await sql`insert into events values (1, now() - interval '40 days'), (2, now() - interval '40 days')`;
    const retention = startRetention(sql, [{ table: "events", column: "created_at" }], log, {
      intervalMs: 3600_000,
    });
    await retention.runOnce();
    await sql`insert into events values (3, now() - interval '40 days'), (4, now() - interval '40 days')`;
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let locked = () => {};
    const isLocked = new Promise<void>((r) => {
      locked = r;
    });
    const holder = sql.begin(async (tx) => {
      await tx`select 1 from events where id = 3 for update`;
      locked();
      await held;
    });
    await isLocked;
    try {
      const removed = await retention.runOnce();
      assert.deepEqual(removed, { events: 1 });
      assert.deepEqual(await ids("events"), [3]);
    } finally {
      release();
      await holder;
    }
    assert.deepEqual(await retention.runOnce(), { events: 1 });
    assert.deepEqual(await ids("events"), []);
    await retention.stop();
  });

  it("runs at start and then on its interval until stopped", async () => {
    await sql`insert into events values (10, now() - interval '31 days')`;
    const retention = startRetention(sql, [{ table: "events", column: "created_at" }], log, {
      intervalMs: 50,
    });
    await eventually(async () => !(await ids("events")).includes(10), 5_000, 20);
    assert.deepEqual(await ids("events"), [], "removed by the run at start");
    await sql`insert into events values (11, now() - interval '31 days')`;
    await eventually(async () => !(await ids("events")).includes(11), 5_000, 20);
    assert.deepEqual(await ids("events"), [], "removed by a later run");
    await retention.stop();
    await sql`insert into events values (12, now() - interval '31 days')`;
    await retention.runOnce();
    assert.deepEqual(await ids("events"), [12], "nothing is removed once stopped");
  });
});
