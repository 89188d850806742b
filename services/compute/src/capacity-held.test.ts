import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { newId, type Sql } from "@hb/platform";
import fc from "fast-check";
import { migratedSchema, type TestSchema } from "./test-schema.ts";

// The capacity rule reads what each provider's machines hold from totals a trigger keeps
// (migration 016). The property: after any sequence of machine changes, in one transaction or
// several, the totals are what an aggregate over the machines says.

const PROVIDERS = ["simulator", "lxd"] as const;
const STATES = ["creating", "running", "stopped", "error"] as const;

interface Fields {
  provider: string;
  state: string;
  has_instance: boolean;
  memory_mb: number;
  disk_gb: number;
}

const fields = fc.record({
  provider: fc.constantFrom(...PROVIDERS),
  state: fc.constantFrom(...STATES),
  has_instance: fc.boolean(),
  memory_mb: fc.integer({ min: 256, max: 65_536 }),
  disk_gb: fc.integer({ min: 1, max: 2_000 }),
});

type Op =
  | { kind: "insert"; f: Fields }
  | { kind: "update"; pick: number; f: Partial<Fields> }
  | { kind: "updateAll"; provider: string; f: Partial<Fields> }
  | { kind: "delete"; pick: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("insert" as const), f: fields }),
  fc.record({
    kind: fc.constant("update" as const),
    pick: fc.nat(),
    f: fields.chain((f) => fc.subarray(Object.keys(f)).map((keys) => pick(f, keys))),
  }),
  fc.record({
    kind: fc.constant("updateAll" as const),
    provider: fc.constantFrom(...PROVIDERS),
    f: fields.chain((f) => fc.subarray(["state", "has_instance", "memory_mb"]).map((keys) => pick(f, keys))),
  }),
  fc.record({ kind: fc.constant("delete" as const), pick: fc.nat() }),
);

const pick = (f: Fields, keys: string[]): Partial<Fields> =>
  Object.fromEntries(Object.entries(f).filter(([k]) => keys.includes(k)));

describe("what each provider's machines hold (capacity_held)", () => {
  let db: TestSchema | undefined;
  let sql: Sql;
  before(async () => {
    db = await migratedSchema("capacity");
    sql = db.sql;
  });
  after(() => db?.drop());

  async function apply(tx: Sql, ops: Op[]) {
    for (const o of ops) {
      const ids = (
        await tx<{ service_id: string }[]>`select service_id from machines order by service_id`
      ).map((r) => r.service_id);
      if (o.kind === "insert") {
        await tx`insert into machines (service_id, customer_id, kind, hostname, provider, state, has_instance, memory_mb, disk_gb)
          values (${newId()}, ${newId()}, 'vps', 'h', ${o.f.provider}, ${o.f.state}, ${o.f.has_instance}, ${o.f.memory_mb}, ${o.f.disk_gb})`;
      } else if (o.kind === "update" && ids.length && Object.keys(o.f).length) {
        await tx`update machines set ${tx(o.f)} where service_id = ${ids[o.pick % ids.length]}`;
      } else if (o.kind === "updateAll" && Object.keys(o.f).length) {
        await tx`update machines set ${tx(o.f)} where provider = ${o.provider}`;
      } else if (o.kind === "delete" && ids.length) {
        await tx`delete from machines where service_id = ${ids[o.pick % ids.length]}`;
      }
    }
  }

  const totals = async () => {
    const kept = await sql<{ provider: string; machines: number; memory_mb: string; disk_gb: string }[]>`
      select provider, machines, memory_mb::text, disk_gb::text from capacity_held where machines <> 0 or memory_mb <> 0 or disk_gb <> 0 order by provider`;
    const counted = await sql<{ provider: string; machines: number; memory_mb: string; disk_gb: string }[]>`
      select provider, count(*)::int as machines, sum(memory_mb)::text as memory_mb, sum(disk_gb)::text as disk_gb
      from machines where has_instance or state = 'creating' group by provider order by provider`;
    return { kept: [...kept], counted: [...counted] };
  };

  it("equal the sum over the machines that hold their plan, after any sequence of changes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(op, { minLength: 1, maxLength: 8 }), { maxLength: 6 }),
        async (txs) => {
          // Each run starts empty, so a counterexample shrinks to the changes that break the totals.
          await sql`truncate machines, capacity_held cascade`;
          for (const ops of txs) await sql.begin((tx) => apply(tx as unknown as Sql, ops));
          const { kept, counted } = await totals();
          assert.deepEqual(kept, counted);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("leave out a transaction that rolled back", async () => {
    const before = await totals();
    await assert.rejects(
      sql.begin(async (tx) => {
        await apply(tx as unknown as Sql, [
          {
            kind: "insert",
            f: { provider: "lxd", state: "creating", has_instance: false, memory_mb: 1024, disk_gb: 20 },
          },
        ]);
        throw new Error("rolled back");
      }),
    );
    assert.deepEqual(await totals(), before);
  });
});
