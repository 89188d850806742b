import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { connectDb, type Sql } from "@hb/platform";
import fc from "fast-check";
import { groupCommit } from "../services/billing/src/group-commit.ts";

// Pays that arrive together share one transaction and its commit (group-commit.ts); an answer must
// still mean that its statement committed, once, and a failing statement must cost the others
// nothing.
describe("group commit: statements waiting together share a transaction", () => {
  let sql: Sql;
  const table = `group_commit_${process.pid}_${Date.now()}`;
  const counters = `${table}_c`;

  before(async () => {
    sql = connectDb(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres", "public", 3);
    await sql`create table ${sql(table)} (id int primary key)`;
    await sql`create table ${sql(counters)} (id int primary key, value int not null check (value >= 0))`;
  });
  after(async () => {
    await sql`drop table if exists ${sql(table)}, ${sql(counters)}`;
    await sql.end();
  });

  const inserts = () =>
    groupCommit<number, { id: number; tx: string }[]>(
      sql,
      (q, id) => q`insert into ${q(table)} values (${id}) returning id, txid_current()::text as tx`,
    );
  const ids = async (from: number, to: number) =>
    (
      await sql<{ id: number }[]>`select id from ${sql(table)} where id between ${from} and ${to} order by id`
    ).map((r) => r.id);

  it("answers each of 20 statements sent at once with its own row, from fewer transactions than statements", async () => {
    const g = inserts();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => g.run(100 + i)));
    assert.deepEqual(
      answers.map(([r]) => r.id),
      Array.from({ length: 20 }, (_, i) => 100 + i),
    );
    const transactions = new Set(answers.map(([r]) => r.tx));
    assert.ok(transactions.size < 20, `${transactions.size} transactions for 20 statements`);
    assert.deepEqual(g.stats, { groups: transactions.size, grouped: 20, alone: 0, rolledBack: 0 });
    assert.deepEqual(
      await ids(100, 119),
      Array.from({ length: 20 }, (_, i) => 100 + i),
    );
  });

  it("runs a statement that waits alone in a transaction of its own, as without the group", async () => {
    const g = inserts();
    const [a] = await g.run(200);
    const [b] = await g.run(201);
    assert.notEqual(a.tx, b.tx);
    assert.deepEqual(g.stats, { groups: 0, grouped: 0, alone: 2, rolledBack: 0 });
  });

  it("fails only the statement that fails, with its own error, and commits each other one once", async () => {
    const g = inserts();
    await g.run(300);
    // 300 exists: its repeat fails with a unique violation, which rolls its group back.
    const sent = [301, 302, 300, 303, 304].map((id) => g.run(id));
    const settled = await Promise.allSettled(sent);
    assert.deepEqual(
      settled.map((s) => s.status),
      ["fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled"],
    );
    assert.equal(((settled[2] as PromiseRejectedResult).reason as { code?: string }).code, "23505");
    assert.equal(g.stats.rolledBack, 1);
    assert.deepEqual(await ids(300, 309), [300, 301, 302, 303, 304]);
  });

  it("moves nothing twice and loses nothing, whatever mix of statements that fail and succeed arrives together", async () => {
    const g = groupCommit<{ id: number; delta: number }, { value: number }[]>(
      sql,
      (q, m) => q`update ${q(counters)} set value = value + ${m.delta} where id = ${m.id} returning value`,
    );
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.array(
            fc.record({ counter: fc.integer({ min: 0, max: 2 }), delta: fc.integer({ min: -5, max: 5 }) }),
            {
              minLength: 1,
              maxLength: 12,
            },
          ),
          { minLength: 1, maxLength: 4 },
        ),
        async (bursts) => {
          const base = ++round * 10;
          await sql`insert into ${sql(counters)} values (${base}, 3), (${base + 1}, 3), (${base + 2}, 3)`;
          const applied = [3, 3, 3];
          for (const burst of bursts) {
            const settled = await Promise.allSettled(
              burst.map((m) => g.run({ id: base + m.counter, delta: m.delta })),
            );
            settled.forEach((s, i) => {
              if (s.status === "fulfilled") applied[burst[i].counter] += burst[i].delta;
              // The only refusal: a counter would go below zero (the check constraint).
              else assert.equal((s.reason as { code?: string }).code, "23514", String(s.reason));
            });
          }
          const rows = await sql<
            { value: number }[]
          >`select value from ${sql(counters)} where id between ${base} and ${base + 2} order by id`;
          assert.deepEqual(
            rows.map((r) => r.value),
            applied,
          );
        },
      ),
      { numRuns: 40 },
    );
    assert.ok(g.stats.groups > 0 && g.stats.rolledBack > 0, JSON.stringify(g.stats));
  });
});
