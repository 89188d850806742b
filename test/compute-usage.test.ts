import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { api, eventually, newAccount, newMachine } from "./helpers.ts";
import { serviceSql } from "./support/service-db.ts";

const db = serviceSql("compute");
after(() => db.end({ timeout: 5 }));

type Point = { at: string; samples: number; cpu_percent: number; network_rx_bytes_per_second: number | null };
type History = { range: string; step_seconds: number; from: string; to: string; points: Point[] };

const statsOf = async (key: string, path: string) => {
  const r = await api("GET", `/api/v1${path}`, { key });
  assert.equal(r.status, 200, `${path}: ${r.text}`);
  return r.body.data as { history?: History; cpu: { usage_percent: number } };
};

/** A bucket as the sampler writes it, placed by hand at a chosen age. */
const bucket = (serviceId: string, stepS: number, agoS: number, samples: number, cpuSum: number) => db`
  insert into compute.usage_buckets (service_id, step_s, bucket_at, samples, cpu_percent_sum,
    memory_used_mb_sum, memory_total_mb, disk_used_gb_sum, disk_total_gb, net_samples, rx_bps_sum, tx_bps_sum)
  values (${serviceId}, ${stepS}, to_timestamp(floor((extract(epoch from now()) - ${agoS}) / ${stepS}) * ${stepS}),
    ${samples}, ${cpuSum}, ${samples * 512}, 1024, ${samples * 5}, 20, ${samples}, ${samples * 1e6}, ${samples * 1e5})
  on conflict do nothing`;

describe("usage history (GET /vps/{id}/stats?range=)", () => {
  it("records readings of a running machine on its own and answers them with ?range=1h", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    const h = await eventually(async () => {
      const s = await statsOf(acct.key, `/vps/${id}/stats?range=1h`);
      // Two passes: the second reading gives the network rate.
      return s.history?.points.some((p) => p.network_rx_bytes_per_second !== null) ? s.history : undefined;
    }, 30_000);
    assert.equal(h.range, "1h");
    assert.equal(h.step_seconds, 60);
    assert.ok(Date.parse(h.to) - Date.parse(h.from) === 3600_000);
    for (const p of h.points) {
      assert.ok(Date.parse(p.at) % 60_000 === 0, `${p.at} is a step's start`);
      assert.ok(p.samples >= 1 && p.cpu_percent >= 0 && p.cpu_percent <= 100);
    }
    // The readings are in the database, in every tier.
    const tiers = await db<{ step_s: number }[]>`
      select distinct step_s from compute.usage_buckets where service_id = ${id} order by step_s`;
    assert.deepEqual(
      tiers.map((t) => t.step_s),
      [60, 300, 1800, 7200],
    );
  });

  it("answers each range from its tier, averaged, within the range and bounded", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    // A day-tier bucket 2 hours back (in 24h) and one 25 hours back (outside it).
    await bucket(id, 300, 7200, 4, 100);
    await bucket(id, 300, 25 * 3600, 2, 50);
    // A month-tier bucket 20 days back.
    await bucket(id, 7200, 20 * 86_400, 3, 30);
    const day = (await statsOf(acct.key, `/vps/${id}/stats?range=24h`)).history!;
    assert.equal(day.step_seconds, 300);
    assert.ok(day.points.length <= 289);
    const twoHoursBack = day.points.filter((p) => Date.now() - Date.parse(p.at) > 3600_000);
    assert.deepEqual(
      twoHoursBack.map((p) => [p.samples, p.cpu_percent]),
      [[4, 25]],
    );
    const month = (await statsOf(acct.key, `/vps/${id}/stats?range=30d`)).history!;
    assert.equal(month.step_seconds, 7200);
    assert.ok(month.points.some((p) => p.samples === 3 && p.cpu_percent === 10));
    assert.ok(month.points.length <= 361);
    const week = (await statsOf(acct.key, `/services/${id}/stats?range=7d`)).history!;
    assert.equal(week.step_seconds, 1800);
    assert.ok(week.points.every((p) => Date.now() - Date.parse(p.at) <= 7 * 86_400_000 + 1800_000));
  });

  it("keeps the answer without ?range as it was: no history", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    const s = await statsOf(acct.key, `/vps/${id}/stats`);
    assert.equal(s.history, undefined);
    assert.equal("history" in s, false);
  });

  it("refuses an unknown range with 400 naming the field, and another customer's machine with 404", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    for (const range of ["2h", "1H", "", "30d%20"]) {
      const r = await api("GET", `/api/v1/vps/${id}/stats?range=${range}`, { key: acct.key });
      assert.equal(r.status, 400, `${range}: ${r.text}`);
      assert.equal(r.body.code, "BAD_REQUEST");
      assert.deepEqual(
        r.body.details.map((d: { field: string }) => d.field),
        ["range"],
      );
    }
    const stranger = await newAccount();
    const r = await api("GET", `/api/v1/vps/${id}/stats?range=1h`, { key: stranger.key });
    assert.equal(r.status, 404, r.text);
  });

  it("prunes each tier past its span plus a step in the sampler's pass", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    await bucket(id, 60, 2 * 3600, 1, 10); // the hour tier keeps 61 minutes
    await bucket(id, 7200, 31 * 86_400, 1, 10); // the month tier keeps 30 days and 2 hours
    await bucket(id, 7200, 29 * 86_400, 1, 10); // still in the month
    await eventually(async () => {
      // The sampler's own current buckets are younger than a step of their tier (up to 2 hours).
      const [r] = await db<{ stale_minutes: number; month_old: number }[]>`
        select count(*) filter (where step_s = 60 and bucket_at < now() - interval '61 minutes')::int as stale_minutes,
          count(*) filter (where bucket_at < now() - interval '2 days')::int as month_old
        from compute.usage_buckets where service_id = ${id}`;
      return r?.stale_minutes === 0 && r.month_old === 1;
    }, 30_000);
  });
});
