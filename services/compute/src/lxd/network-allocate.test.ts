/** Customer networks and machine addresses handed out by compute's database (network-allocate.ts). */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { Sql } from "@hb/platform";
import type { JobRow } from "../driver.ts";
import type { MachineRow } from "../machines.ts";
import { migratedSchema, type TestSchema } from "../test-schema.ts";
import { parsePool } from "./network.ts";
import { allocateNetwork } from "./network-allocate.ts";

const pool = parsePool("198.18.0.0/22"); // three /24 customer subnets after the host's

describe("allocateNetwork", () => {
  let db: TestSchema | undefined;
  let sql: Sql;
  before(async () => {
    db = await migratedSchema("net");
    sql = db.sql;
  });
  after(() => db?.drop());

  async function jobFor(customer: string) {
    const id = randomUUID();
    await sql`insert into jobs (id, service_id, customer_id, action) values (${id}, ${randomUUID()}, ${customer}, 'build')`;
    return [{ id } as JobRow, { customer_id: customer } as MachineRow] as const;
  }

  it("gives a customer one subnet and its builds distinct addresses, even at once, each kept in its job", async () => {
    const [alice, bob] = [randomUUID(), randomUUID()];
    const jobs = await Promise.all([alice, alice, alice, bob, bob].map(jobFor));
    const nets = await Promise.all(jobs.map(([j, m]) => allocateNetwork(sql, pool, 24, j, m, "local")));
    const [a, b] = [nets.slice(0, 3), nets.slice(3)];
    assert.equal(new Set(a.map((n) => n.bridge)).size, 1, "one bridge for alice");
    assert.equal(new Set(b.map((n) => n.bridge)).size, 1, "one bridge for bob");
    assert.notEqual(a[0].subnet, b[0].subnet);
    // The lowest free ones, after the gateway (.1).
    assert.deepEqual(a.map((n) => n.address.split(".")[3]).sort(), ["2", "3", "4"]);
    assert.equal(new Set(a.map((n) => n.address)).size, 3, "distinct addresses");
    const kept = await sql<
      { net: { address: string } }[]
    >`select driver_state->'network' as net from jobs where id = ${jobs[0][0].id}`;
    assert.equal(
      kept[0].net.address,
      nets[0].address,
      "the job holds its address from the moment it is chosen",
    );
  });

  it("refuses a customer when every subnet of the pool is taken, saying so", async () => {
    const [j, m] = await jobFor(randomUUID());
    await allocateNetwork(sql, pool, 24, j, m, "local"); // the third subnet
    const [j2, m2] = await jobFor(randomUUID());
    await assert.rejects(
      allocateNetwork(sql, pool, 24, j2, m2, "local"),
      /Every customer network of the LXD network pool is taken/,
    );
    // Another endpoint has subnets of its own.
    assert.equal((await allocateNetwork(sql, pool, 24, j2, m2, "other")).subnet, "198.18.1.0/24");
  });
});
