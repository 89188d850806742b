import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { connectDb, type Sql } from "@hb/platform";
import { transactWithCommit } from "../services/billing/src/shared.ts";

// An order's or a pay's Idempotency-Key answer is sent with the commit, without waiting for it:
// a 201 must still mean that the money moved and the answer is kept, or neither.
describe("a transaction whose last statement goes with the commit", () => {
  let sql: Sql;
  const table = `commit_with_last_${process.pid}_${Date.now()}`;
  const rows = async () =>
    (await sql<{ id: number }[]>`select id from ${sql(table)} order by id`).map((r) => r.id);

  before(async () => {
    sql = connectDb(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres", "public", 2);
    await sql`create table ${sql(table)} (id int primary key)`;
  });
  after(async () => {
    await sql`drop table if exists ${sql(table)}`;
    await sql.end();
  });

  it("commits both the transaction's statements and the last one, and answers the result", async () => {
    const result = await transactWithCommit(sql, async (tx, withCommit) => {
      await tx`insert into ${tx(table)} values (1)`;
      withCommit(tx`insert into ${tx(table)} values (2)`.execute());
      return "placed";
    });
    assert.equal(result, "placed");
    assert.deepEqual(await rows(), [1, 2]);
  });

  it("when the last statement fails, throws its error and leaves nothing of the transaction", async () => {
    await assert.rejects(
      transactWithCommit(sql, async (tx, withCommit) => {
        await tx`insert into ${tx(table)} values (3)`;
        // Row 1 exists: the unique violation aborts the transaction, so the commit rolls it back.
        withCommit(tx`insert into ${tx(table)} values (1)`.execute());
        return "placed";
      }),
      (err: { code?: string }) => err.code === "23505",
    );
    assert.deepEqual(await rows(), [1, 2], "row 3 was rolled back with the failed statement");
  });
});
