import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { connectDb, type Sql, type TxSql } from "@hb/platform";
import fc from "fast-check";
import { groupCommit } from "../services/billing/src/group-commit.ts";
import { type GroupedWork, transactionGroup } from "../services/billing/src/transaction-group.ts";

// Pays that arrive together are made in one statement (group-commit.ts), pay_from_credit called once
// per pay; an answer must still mean that its pay committed, once, and a failing pay must cost the
// others nothing. The functions here stand in for pay_from_credit.
describe("group commit: items waiting together run as one statement", () => {
  let sql: Sql;
  const table = `group_commit_${process.pid}_${Date.now()}`;
  const counters = `${table}_c`;
  const put = `${table}_put`;
  const bump = `${table}_bump`;

  before(async () => {
    sql = connectDb(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres", "public", 3);
    await sql`create table ${sql(table)} (id int primary key)`;
    await sql`create table ${sql(counters)} (id int primary key, value int not null check (value >= 0))`;
    await sql`create sequence ${sql(`${table}_s`)}`;
    await sql.unsafe(`create function ${put}(p_id int, out id int, out tx text, out n bigint) language plpgsql as $$
      begin
        insert into ${table} values (p_id);
        id := p_id; tx := txid_current()::text; n := nextval('${table}_s');
      end $$`);
    await sql.unsafe(`create function ${bump}(p_id int, p_delta int, out value int) language plpgsql as $$
      begin
        update ${counters} c set value = c.value + p_delta where c.id = p_id returning c.value into value;
      end $$`);
  });
  after(async () => {
    await sql.unsafe(`drop function if exists ${put}, ${bump}`);
    await sql`drop table if exists ${sql(table)}, ${sql(counters)}`;
    await sql`drop sequence if exists ${sql(`${table}_s`)}`;
    await sql.end();
  });

  type Put = { id: number; tx: string; n: string };
  const puts = (orderOf?: (id: number) => string) =>
    groupCommit<number, Put>(
      sql,
      async (q, ids) => {
        const [r] = await q<{ puts: Put[] }[]>`
          select json_agg(json_build_object('id', p.id, 'tx', p.tx, 'n', p.n::text) order by a.n) as puts
          from unnest(${ids}::int[]) with ordinality as a(id, n) cross join lateral ${q(put)}(a.id) p`.execute();
        return r.puts;
      },
      { orderOf },
    );
  const ids = async (from: number, to: number) =>
    (
      await sql<{ id: number }[]>`select id from ${sql(table)} where id between ${from} and ${to} order by id`
    ).map((r) => r.id);

  it("answers each of 20 items sent at once with its own row, from fewer transactions than items", async () => {
    const g = puts();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => g.run(100 + i)));
    assert.deepEqual(
      answers.map((r) => r.id),
      Array.from({ length: 20 }, (_, i) => 100 + i),
    );
    const transactions = new Set(answers.map((r) => r.tx));
    assert.ok(transactions.size < 20, `${transactions.size} transactions for 20 items`);
    assert.deepEqual(g.stats, { groups: transactions.size, grouped: 20, alone: 0, failed: 0 });
    assert.deepEqual(
      await ids(100, 119),
      Array.from({ length: 20 }, (_, i) => 100 + i),
    );
  });

  it("runs an item that waits alone in a transaction of its own, as without the group", async () => {
    const g = puts();
    const a = await g.run(200);
    const b = await g.run(201);
    assert.notEqual(a.tx, b.tx);
    assert.deepEqual(g.stats, { groups: 0, grouped: 0, alone: 2, failed: 0 });
  });

  it("runs a group's items in the order orderOf gives (the payers'), and answers each its own", async () => {
    const g = puts((id) => String(999 - id));
    const answers = await Promise.all([500, 501, 502, 503].map((id) => g.run(id)));
    assert.deepEqual(
      answers.map((r) => r.id),
      [500, 501, 502, 503],
    );
    // Run in the group's order: 503 first.
    const n = answers.map((r) => Number(r.n));
    assert.deepEqual(n, [n[3] + 3, n[3] + 2, n[3] + 1, n[3]]);
  });

  it("fails only the item that fails, with its own error, and commits each other one once", async () => {
    const g = puts();
    await g.run(300);
    // 300 exists: its repeat fails with a unique violation, which fails its group's statement.
    const settled = await Promise.allSettled([301, 302, 300, 303, 304].map((id) => g.run(id)));
    assert.deepEqual(
      settled.map((s) => s.status),
      ["fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled"],
    );
    assert.equal(((settled[2] as PromiseRejectedResult).reason as { code?: string }).code, "23505");
    assert.equal(g.stats.failed, 1);
    assert.deepEqual(await ids(300, 309), [300, 301, 302, 303, 304]);
  });

  it("moves nothing twice and loses nothing, whatever mix of items that fail and succeed arrives together", async () => {
    const g = groupCommit<{ id: number; delta: number }, { value: number }>(sql, async (q, moves) => {
      const [r] = await q<{ values: number[] }[]>`
        select array_agg(b.value order by a.n) as values
        from unnest(${moves.map((m) => m.id)}::int[], ${moves.map((m) => m.delta)}::int[]) with ordinality as a(id, delta, n)
        cross join lateral ${q(bump)}(a.id, a.delta) b`.execute();
      return r.values.map((value) => ({ value }));
    });
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
    assert.ok(g.stats.groups > 0 && g.stats.failed > 0, JSON.stringify(g.stats));
  });
});

// Orders that arrive together run one after another in one transaction, each in a savepoint of its
// own (transaction-group.ts); a 201 must still mean that its rows are there, and a refusal or a
// failed last statement must undo that order alone.
describe("transaction group: transactions waiting together share one commit", () => {
  let sql: Sql;
  const table = `tx_group_${process.pid}_${Date.now()}`;

  before(async () => {
    sql = connectDb(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres", "public", 3);
    await sql`create table ${sql(table)} (id int primary key, owner int not null)`;
  });
  after(async () => {
    await sql`drop table if exists ${sql(table)}`;
    await sql.end();
  });

  const owners = async (from: number, to: number) =>
    Object.fromEntries(
      (
        await sql<{ id: number; owner: number }[]>`
          select id, owner from ${sql(table)} where id between ${from} and ${to} order by id`
      ).map((r) => [r.id, r.owner]),
    );

  /** A transaction that inserts `ids` (owned by `owner`), then `last` with the commit, then maybe throws. */
  const work =
    (
      owner: number,
      ids: number[],
      last?: number,
      refuse = false,
      runs?: Map<number, number>,
    ): GroupedWork<number> =>
    async (tx, withCommit) => {
      runs?.set(owner, (runs.get(owner) ?? 0) + 1);
      for (const id of ids) await tx`insert into ${tx(table)} values (${id}, ${owner})`;
      if (last !== undefined) withCommit(tx`insert into ${tx(table)} values (${last}, ${owner})`.execute());
      if (refuse) throw new Error(`refused ${owner}`);
      return owner;
    };

  it("answers each of 10 transactions sent at once after one commit of them all", async () => {
    const g = transactionGroup(sql);
    const ids: string[] = [];
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        g.run(
          async (tx, withCommit) => {
            const [{ tx: id }] = await tx<{ tx: string }[]>`select txid_current()::text as tx`;
            ids.push(id);
            withCommit(tx`insert into ${tx(table)} values (${100 + i}, ${i})`.execute());
            return i;
          },
          `payer-${i % 3}`,
        ),
      ),
    );
    assert.deepEqual(answers, [...Array(10).keys()]);
    assert.ok(new Set(ids).size < 10, `${new Set(ids).size} transactions for 10`);
    assert.equal(g.stats.grouped + g.stats.alone, 10);
    assert.equal(Object.keys(await owners(100, 109)).length, 10);
  });

  it("answers a transaction that throws with its error, leaves none of its rows, and commits the others", async () => {
    const g = transactionGroup(sql);
    const settled = await Promise.allSettled([
      g.run(work(1, [200]), "a"),
      g.run(work(2, [201], 202, true), "b"),
      g.run(work(3, [203], 204), "c"),
    ]);
    assert.deepEqual(
      settled.map((s) => s.status),
      ["fulfilled", "rejected", "fulfilled"],
    );
    assert.match(String((settled[1] as PromiseRejectedResult).reason), /refused 2/);
    assert.deepEqual(await owners(200, 209), { 200: 1, 203: 3, 204: 3 });
  });

  it("answers a transaction whose last statement fails with its error, and runs those after it again, once each", async () => {
    const g = transactionGroup(sql);
    await sql`insert into ${sql(table)} values (310, 0)`;
    const runs = new Map<number, number>();
    const settled = await Promise.allSettled([
      g.run(work(1, [300], 301, false, runs), "a"),
      // Its last insert meets 310: a unique violation with the commit's statements.
      g.run(work(2, [302], 310, false, runs), "b"),
      g.run(work(3, [303], 304, false, runs), "c"),
      g.run(work(4, [305], undefined, false, runs), "d"),
    ]);
    assert.deepEqual(
      settled.map((s) => s.status),
      ["fulfilled", "rejected", "fulfilled", "fulfilled"],
    );
    assert.equal(((settled[1] as PromiseRejectedResult).reason as { code?: string }).code, "23505");
    assert.deepEqual(await owners(300, 310), { 300: 1, 301: 1, 303: 3, 304: 3, 305: 4, 310: 0 });
    assert.equal(runs.get(1), 1);
    assert.ok((runs.get(3) ?? 0) >= 2, "the transaction after the failed one ran again");
  });

  it("refuses a statement sent after its transaction settled", async () => {
    const g = transactionGroup(sql);
    let kept: TxSql | undefined;
    await Promise.all([
      g.run(async (tx) => {
        kept = tx;
        return 0;
      }, "a"),
      g.run(work(2, [400]), "b"),
    ]);
    assert.throws(
      () => kept!`insert into ${kept!(table)} values (401, 1)`,
      /after its grouped transaction settled/,
    );
    assert.deepEqual(await owners(400, 409), { 400: 2 });
  });

  it("keeps exactly the rows of the transactions it answered, whatever mix of refusals and failures comes together", async () => {
    const g = transactionGroup(sql);
    let round = 0;
    const step = fc.record({
      ids: fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 3 }),
      last: fc.option(fc.integer({ min: 0, max: 9 }), { nil: undefined }),
      refuse: fc.boolean(),
      payer: fc.constantFrom("a", "b", "c"),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 2, maxLength: 12 }), async (steps) => {
        const base = 1000 + ++round * 10;
        const settled = await Promise.allSettled(
          steps.map((st, owner) =>
            g.run(
              work(
                owner,
                st.ids.map((id) => base + id),
                st.last === undefined ? undefined : base + st.last,
                st.refuse,
              ),
              st.payer,
            ),
          ),
        );
        const rows = await owners(base, base + 9);
        const expected: Record<number, number> = {};
        settled.forEach((s, owner) => {
          if (s.status !== "fulfilled") return;
          for (const id of [
            ...steps[owner].ids,
            ...(steps[owner].last === undefined ? [] : [steps[owner].last]),
          ])
            expected[base + id] = owner;
        });
        assert.deepEqual(rows, expected);
        for (const [owner, s] of settled.entries())
          if (s.status === "rejected")
            assert.ok(
              steps[owner].refuse || (s.reason as { code?: string }).code === "23505",
              `${owner}: ${String(s.reason)}`,
            );
      }),
      { numRuns: 60 },
    );
    assert.ok(g.stats.groups > 0 && g.stats.rolledBack > 0, JSON.stringify(g.stats));
  });
});
