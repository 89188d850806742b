import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createLogger, newId, type Sql } from "@hb/platform";
import type { Drivers, MachineStats, ProviderDriver } from "./driver.ts";
import type { MachineRow } from "./machines.ts";
import { migratedSchema, type TestSchema } from "./test-schema.ts";
import { startUsageSampler } from "./usage-sampler.ts";
import { TIERS } from "./usage-tiers.ts";

// A pass reads the machines a page at a time (its memory bounded by the page, not the host): every
// machine with an instance is still read once per pass, whatever the page size, and the network
// counters remembered between passes survive the paging.

describe("the usage sampler", () => {
  let db: TestSchema | undefined;
  let sql: Sql;
  before(async () => {
    db = await migratedSchema("usage");
    sql = db.sql;
  });
  after(() => db?.drop());

  /** A driver whose machines have each sent 1,000 bytes more at every reading. */
  function countingDriver() {
    const reads = new Map<string, number>();
    const driver = {
      async stats(m: MachineRow): Promise<MachineStats> {
        const n = (reads.get(m.service_id) ?? 0) + 1;
        reads.set(m.service_id, n);
        return {
          cpu: { vcpus: 1, usage_percent: 10 },
          memory: { total_mb: 1024, used_mb: 512 },
          disk: { total_gb: 20, used_gb: 2 },
          network: { rx_bytes: 1000 * n, tx_bytes: 500 * n },
        };
      },
    } as unknown as ProviderDriver; // only stats is asked for by the sampler
    return { drivers: { simulator: driver } as Drivers, reads };
  }

  it("reads every machine with an instance once per pass, a page at a time, and gives each a network rate from its second pass", async () => {
    await sql`truncate machines, usage_buckets cascade`;
    const built = Array.from({ length: 7 }, () => newId());
    const unbuilt = newId();
    for (const id of [...built, unbuilt])
      await sql`insert into machines (service_id, customer_id, kind, hostname, state, has_instance)
        values (${id}, ${newId()}, 'vps', 'h', 'running', ${id !== unbuilt})`;
    const { drivers, reads } = countingDriver();
    // A page of 3: the 7 machines take three pages, the last one short.
    const sampler = startUsageSampler(sql, drivers, createLogger("test", "error"), 3_600_000, 3);
    try {
      const t0 = new Date("2026-11-28T10:00:10Z");
      assert.equal(await sampler.pass(t0), 7);
      assert.equal(await sampler.pass(new Date(t0.getTime() + 60_000)), 7);
      assert.deepEqual(
        [...reads].sort(),
        built.map((id) => [id, 2]).sort(),
        "each built machine read twice, the unbuilt one never",
      );
      const rows = await sql<{ service_id: string; step_s: number; samples: number; net_samples: number }[]>`
        select service_id, step_s, sum(samples)::int as samples, sum(net_samples)::int as net_samples
        from usage_buckets group by 1, 2 order by 1, 2`;
      assert.equal(rows.length, built.length * TIERS.length);
      for (const r of rows) {
        assert.equal(r.samples, 2, `${r.service_id} ${r.step_s}`);
        // The first reading has no earlier counters; the second has, paged or not.
        assert.equal(r.net_samples, 1, `${r.service_id} ${r.step_s}`);
      }
    } finally {
      await sampler.stop();
    }
  });

  it("a machine gone since the last pass starts again without a rate when it is back", async () => {
    await sql`truncate machines, usage_buckets cascade`;
    const id = newId();
    await sql`insert into machines (service_id, customer_id, kind, hostname, state, has_instance)
      values (${id}, ${newId()}, 'vps', 'h', 'running', true)`;
    const { drivers } = countingDriver();
    const sampler = startUsageSampler(sql, drivers, createLogger("test", "error"), 3_600_000, 3);
    try {
      const t0 = new Date("2026-11-28T11:00:10Z");
      await sampler.pass(t0);
      await sql`update machines set has_instance = false where service_id = ${id}`;
      assert.equal(await sampler.pass(new Date(t0.getTime() + 60_000)), 0);
      await sql`update machines set has_instance = true where service_id = ${id}`;
      await sampler.pass(new Date(t0.getTime() + 120_000));
      const [r] = await sql<{ net_samples: number }[]>`
        select sum(net_samples)::int as net_samples from usage_buckets where service_id = ${id} and step_s = 60`;
      assert.equal(r?.net_samples, 0, "no rate across the gap: its counters were forgotten");
    } finally {
      await sampler.stop();
    }
  });
});
