import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  downsample,
  fold,
  inRange,
  maxPoints,
  oldestKept,
  TIERS,
  type UsageBucket,
  type UsageReading,
} from "./usage-tiers.ts";

const NOW = Date.UTC(2026, 10, 27, 12, 34, 56, 789);
const MONTH_MS = 31 * 86_400_000;
const IDS = ["0193a5c2-7d1e-7c4a-9f3b-2e8d6a1b4c5d", "0193a5c2-7d1e-7c4a-9f3b-2e8d6a1b4c5e"];

const reading = fc.record({
  serviceId: fc.constantFrom(...IDS),
  at: fc.integer({ min: NOW - MONTH_MS, max: NOW }).map((ms) => new Date(ms)),
  cpuPercent: fc.integer({ min: 0, max: 100 }),
  memoryUsedMb: fc.integer({ min: 0, max: 65_536 }),
  memoryTotalMb: fc.constant(65_536),
  diskUsedGb: fc.integer({ min: 0, max: 500 }),
  diskTotalGb: fc.constant(500),
  rate: fc.option(
    fc.record({ rxBps: fc.integer({ min: 0, max: 1e9 }), txBps: fc.integer({ min: 0, max: 1e9 }) }),
  ),
});
const readings = fc
  .array(reading, { maxLength: 400 })
  .map((rs) => rs.map(({ rate, ...r }): UsageReading => ({ ...r, ...(rate ?? {}) })));

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe("usage tiers", () => {
  it("loses no reading: every tier's sums and counts equal the readings' own", () => {
    fc.assert(
      fc.property(readings, (rs) => {
        for (const tier of TIERS) {
          const bs = downsample(rs, tier);
          for (const id of IDS) {
            const mine = rs.filter((r) => r.serviceId === id);
            const b = bs.filter((x) => x.serviceId === id);
            assert.equal(sum(b.map((x) => x.samples)), mine.length);
            assert.equal(sum(b.map((x) => x.cpuPercentSum)), sum(mine.map((r) => r.cpuPercent)));
            assert.equal(sum(b.map((x) => x.memoryUsedMbSum)), sum(mine.map((r) => r.memoryUsedMb)));
            assert.equal(sum(b.map((x) => x.diskUsedGbSum)), sum(mine.map((r) => r.diskUsedGb)));
            const net = mine.filter((r) => r.rxBps !== undefined);
            assert.equal(sum(b.map((x) => x.netSamples)), net.length);
            assert.equal(sum(b.map((x) => x.rxBpsSum)), sum(net.map((r) => r.rxBps ?? 0)));
          }
        }
      }),
    );
  });

  it("folding a tier's buckets pass by pass gives what one fold of all readings gives", () => {
    fc.assert(
      fc.property(readings, fc.integer({ min: 1, max: 10 }), (rs, passes) => {
        for (const tier of TIERS) {
          // The database folds each pass's buckets into the stored ones (the upsert).
          const stored = new Map<string, UsageBucket>();
          for (let p = 0; p < passes; p++) {
            for (const b of downsample(
              rs.filter((_, i) => i % passes === p),
              tier,
            )) {
              const key = `${b.serviceId}|${b.bucketAt.getTime()}`;
              const had = stored.get(key);
              stored.set(key, had ? fold(had, b) : b);
            }
          }
          const once = downsample(rs, tier);
          assert.equal(stored.size, once.length);
          for (const b of once) {
            const s = stored.get(`${b.serviceId}|${b.bucketAt.getTime()}`);
            assert.equal(s?.samples, b.samples);
            assert.equal(s?.cpuPercentSum, b.cpuPercentSum);
          }
        }
      }),
    );
  });

  it("answers at most a range's steps plus one point per machine, each a step's start, none outside the range", () => {
    fc.assert(
      fc.property(readings, (rs) => {
        for (const tier of TIERS) {
          const shown = inRange(downsample(rs, tier), tier, new Date(NOW));
          for (const id of IDS) {
            const mine = shown.filter((b) => b.serviceId === id);
            assert.ok(mine.length <= maxPoints(tier), `${mine.length} > ${maxPoints(tier)}`);
          }
          for (const b of shown) {
            assert.equal(b.bucketAt.getTime() % (tier.stepS * 1000), 0);
            assert.ok(b.bucketAt.getTime() + tier.stepS * 1000 > NOW - tier.spanS * 1000);
            // Pruning never removes a bucket the range still shows.
            assert.ok(b.bucketAt.getTime() >= oldestKept(tier, new Date(NOW)).getTime());
          }
        }
      }),
    );
  });

  it("keeps at most 61, 289, 337 and 361 points per machine for 1h, 24h, 7d and 30d (the documented bound)", () => {
    const tierRows = TIERS.map((t) => maxPoints(t));
    assert.deepEqual(tierRows, [61, 289, 337, 361]);
  });
});
