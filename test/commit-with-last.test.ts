import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { connectDb, type Sql } from "@hb/platform";
import { transactPipelined } from "../services/billing/src/shared.ts";

// An order's and a pay's transaction (transactPipelined) sends its begin with its first statements,
// on a reserved connection, and the Idempotency-Key's answer with the commit, without waiting for
// it: a 201 must still mean that the money moved and the answer is kept, or neither.
describe("a transaction whose begin goes with its first statements and its last with the commit", () => {
  let sql: Sql;
  const table = `commit_with_last_${process.pid}_${Date.now()}`;
  /** The rows one case wrote (each case writes ids from base + 1 on). */
  const rows = async (base: number) =>
    (
      await sql<
        { id: number }[]
      >`select id from ${sql(table)} where id > ${base} and id <= ${base + 9} order by id`
    ).map((r) => r.id);

  before(async () => {
    sql = connectDb(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres", "public", 2);
    await sql`create table ${sql(table)} (id int primary key)`;
  });
  after(async () => {
    await sql`drop table if exists ${sql(table)}`;
    await sql.end();
  });

  const run = transactPipelined;
  const base = 0;
  describe("transactPipelined (the begin with the first statements too)", () => {
    it("commits both the transaction's statements and the last one, and answers the result", async () => {
      const result = await run(sql, async (tx, withCommit) => {
        await tx`insert into ${tx(table)} values (${base + 1})`;
        withCommit(tx`insert into ${tx(table)} values (${base + 2})`.execute());
        return "placed";
      });
      assert.equal(result, "placed");
      assert.deepEqual(await rows(base), [base + 1, base + 2]);
    });

    it("when the last statement fails, throws its error and leaves nothing of the transaction", async () => {
      await assert.rejects(
        run(sql, async (tx, withCommit) => {
          await tx`insert into ${tx(table)} values (${base + 3})`;
          // That row exists: the unique violation aborts the transaction, so the commit rolls it back.
          withCommit(tx`insert into ${tx(table)} values (${base + 1})`.execute());
          return "placed";
        }),
        (err: { code?: string }) => err.code === "23505",
      );
      assert.deepEqual(await rows(base), [base + 1, base + 2], "the transaction's row was rolled back");
    });

    it("when a statement before fails, throws and leaves nothing, and the connection serves the next", async () => {
      for (let i = 0; i < 3; i++) {
        await assert.rejects(
          run(sql, async (tx) => {
            await tx`insert into ${tx(table)} values (${base + 4})`;
            await tx`insert into ${tx(table)} values (${base + 2})`;
            return "placed";
          }),
          (err: { code?: string }) => err.code === "23505",
        );
      }
      assert.deepEqual(await rows(base), [base + 1, base + 2]);
    });
  });
});
