/**
 * The outbox relay against the real PostgreSQL (a schema of its own) and NATS (a namespace of its
 * own, so its streams are this test's alone).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { jetstreamManager } from "@nats-io/jetstream";
import postgres from "postgres";
import { eventually } from "../../../test/support/eventually.ts";
import { connectDb, type Sql } from "./db.ts";
import { newId } from "./ids.ts";
import { createLogger } from "./log.ts";
import { linkNats, type NatsLink, streams } from "./nats.ts";
import { type OutboxRelay, startOutboxRelay, writeOutboxBatch } from "./outbox.ts";

const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const NATS_URL = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const tag = `${process.pid}${Date.now().toString(36)}`;
const schema = `outbox_test_${tag}`;
const ns = `outboxtest${tag}`;
const log = createLogger("outbox-test", "error");

describe("outbox relay", () => {
  let sql: Sql;
  let nats: NatsLink;
  let relay: OutboxRelay | undefined;

  before(async () => {
    sql = connectDb(url, schema, 2);
    await sql.unsafe(`create schema "${schema}"`);
    // The columns every service's outbox has (their migrations 001 and the request ids' later one).
    await sql.unsafe(`create table "${schema}".outbox (
      id uuid primary key, subject text not null, payload bytea not null, request_id text,
      traceparent text, created_at timestamptz not null default clock_timestamp(), published_at timestamptz)`);
    // The index the relay reads the waiting rows by, as every service's migration 001 makes it.
    await sql.unsafe(
      `create index outbox_unpublished on "${schema}".outbox (created_at, id) where published_at is null`,
    );
    nats = linkNats(NATS_URL, "outbox-test", ns, log);
    await nats.ready;
  });
  after(async () => {
    await relay?.stop();
    const nc = nats?.current;
    if (nc) {
      const jsm = await jetstreamManager(nc);
      for (const s of [streams(ns).events, streams(ns).requestLog])
        await jsm.streams.delete(s.name).catch(() => {});
    }
    await nats?.close();
    await sql?.unsafe(`drop schema if exists "${schema}" cascade`);
    await sql?.end({ timeout: 5 });
  });

  /** The ids of the stream's messages from `fromSeq` on, in stream order. */
  const storedIds = async (fromSeq = 1) => {
    const jsm = await jetstreamManager(nats.current!);
    const stream = streams(ns).events.name;
    const info = await jsm.streams.info(stream);
    const ids: string[] = [];
    for (let seq = Math.max(fromSeq, info.state.first_seq); seq <= info.state.last_seq; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq });
      ids.push(m!.header.get("Nats-Msg-Id"));
    }
    return ids;
  };

  it("publishes every committed row once, in the order written, across batches of the relay", async () => {
    // 450 rows: more than two of the relay's batches of 200, written in three transactions.
    const written: string[] = [];
    for (let t = 0; t < 3; t++) {
      const events = await sql.begin((tx) =>
        writeOutboxBatch(
          tx,
          ns,
          Array.from({ length: 150 }, (_, i) => ({ type: i % 2 ? "test.odd" : "test.even" })),
        ),
      );
      written.push(...events.map((e) => e.id));
    }
    relay = startOutboxRelay(sql, nats, log, 50);
    const jsm = await jetstreamManager(nats.current!);
    const stream = streams(ns).events.name;
    await eventually(async () => (await jsm.streams.info(stream)).state.messages >= written.length, 30_000);
    // Give a second publish of any row the chance to land before counting.
    assert.equal(await relay.flush(), 0, "nothing left to publish");
    assert.deepEqual(await storedIds(), written);
    const [left] = await sql<
      { n: number }[]
    >`select count(*)::int as n from outbox where published_at is null`;
    assert.equal(left!.n, 0);
  });
  it("stores none of a batch whose first row the stream refuses, and all of it in order once it is taken", async () => {
    await relay?.stop();
    relay = undefined;
    const before = (await storedIds()).length;
    const events = await sql.begin((tx) =>
      writeOutboxBatch(
        tx,
        ns,
        Array.from({ length: 20 }, () => ({ type: "test.refused" })),
      ),
    );
    const ids = events.map((e) => e.id);
    // No stream takes this subject: JetStream answers the publish "no responders".
    await sql`update outbox set subject = ${`${ns}-nostream.test`} where id = ${ids[0]!}`;
    relay = startOutboxRelay(sql, nats, log, 60_000);
    await assert.rejects(relay.flush());
    assert.equal((await storedIds()).length, before, "no row after the refused one was stored");
    await sql`update outbox set subject = ${streams(ns).eventSubject("test.refused")} where id = ${ids[0]!}`;
    await relay.flush();
    assert.deepEqual((await storedIds()).slice(before), ids);
  });

  it("at rest asks whether a row waits instead of taking the relay's lock, and publishes a row queued without a notification at its next pass", async () => {
    await relay?.stop();
    relay = startOutboxRelay(sql, nats, log, 50);
    assert.equal(await relay.flush(), 0);
    // Watched and locked from connections of their own, outside the relay's pool.
    const observer = postgres(url, { max: 2, onnotice: () => {} });
    // A check that ran after `since` (the relay's connection idle again after it).
    const checked = async (since: string) => {
      const [seen] = await observer<{ n: number }[]>`select count(*)::int as n from pg_stat_activity
        where application_name = ${schema} and state = 'idle'
          and query_start > ${since}::text::timestamptz
          and query like 'select 1 from outbox where published_at is null%'`;
      return seen!.n > 0;
    };
    // At rest (its first passes after start are behind it), the relay's timer passes only check.
    const atRest = eventually(() => checked("-infinity"), 10_000);
    // The relay's lock held elsewhere: a pass that took it would be seen waiting for it.
    const holder = await observer.reserve();
    try {
      await atRest;
      await holder`begin`;
      await holder`select pg_advisory_xact_lock(hashtext(${`outbox-relay:${schema}`}))`;
      const [{ t }] = await holder<{ t: string }[]>`select clock_timestamp()::text as t`;
      const relayWaits = async () => {
        const [w] = await holder<{ n: number }[]>`select count(*)::int as n from pg_locks l
          join pg_stat_activity a on a.pid = l.pid
          where l.locktype = 'advisory' and not l.granted and a.application_name = ${schema}`;
        return w!.n > 0;
      };
      await eventually(() => checked(t), 10_000);
      assert.equal(await relayWaits(), false, "a pass at rest took the relay's lock");
      // A row queued without NOTIFY (as if the listener were lost): the next timer pass sees it.
      const late = newId();
      await sql`insert into outbox (id, subject, payload)
        values (${late}, ${streams(ns).eventSubject("test.unnotified")}, ${Buffer.from("late")})`;
      await eventually(relayWaits, 10_000);
      await holder`commit`;
      await eventually(async () => (await storedIds()).includes(late), 10_000);
    } finally {
      await holder`rollback`.catch(() => {});
      holder.release();
      await observer.end({ timeout: 5 });
    }
  });
  it("reads past the rows it has published once, not again at every pass", async () => {
    await relay?.stop();
    relay = startOutboxRelay(sql, nats, log, 60_000);
    await relay.flush();
    const observer = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const stats = async () => {
        await observer`select pg_stat_clear_snapshot()`;
        const [row] = await observer<{ scans: number; read: number }[]>`
          select idx_scan::int as scans, idx_tup_read::int as read from pg_stat_user_indexes
          where schemaname = ${schema} and indexrelname = 'outbox_unpublished'`;
        return row!;
      };
      // Each backend reports its counts when it goes idle, at most once a second.
      const settled = async (scans: number) => {
        let now = { scans: -1, read: 0 };
        await eventually(async () => {
          now = await stats();
          return now.scans >= scans;
        }, 20_000);
        return now;
      };
      const start = await settled(0);
      // 60 passes of 5 rows each: 300 rows published one batch after another, as under orders.
      const passes = 60;
      for (let i = 0; i < passes; i++) {
        await sql.begin((tx) =>
          writeOutboxBatch(
            tx,
            ns,
            Array.from({ length: 5 }, () => ({ type: "test.pass" })),
          ),
        );
        // Published by this pass, or by the relay's own that the commit's notification woke.
        await relay.flush();
      }
      const end = await settled(start.scans + passes);
      const perScan = (end.read - start.read) / (end.scans - start.scans);
      // A bitmap scan read every entry of a published row again, back to the last vacuum: about
      // 150 a scan here on average. Read in index order, the dead ones are marked and skipped.
      assert.ok(perScan < 40, `${perScan.toFixed(1)} index entries read a scan`);
    } finally {
      await observer.end({ timeout: 5 });
    }
  });
});
