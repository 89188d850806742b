import { UsageRange } from "@hb/contracts/hb/compute/v1/machines_pb";

/**
 * How usage history is kept bounded: every reading is folded into one bucket of each tier, and a
 * range is answered from the tier whose step fits it. A tier keeps its span plus one step, so the
 * oldest bucket a range shows is never pruned before it leaves the range. Per machine that is at
 * most 61 + 289 + 337 + 361 buckets however long it runs (docs/architecture.md, "Usage history").
 */
export interface Tier {
  /** The range this tier answers. */
  range: UsageRange;
  stepS: number;
  spanS: number;
}

export const TIERS: readonly Tier[] = [
  { range: UsageRange.HOUR, stepS: 60, spanS: 3600 },
  { range: UsageRange.DAY, stepS: 300, spanS: 86_400 },
  { range: UsageRange.WEEK, stepS: 1800, spanS: 7 * 86_400 },
  { range: UsageRange.MONTH, stepS: 7200, spanS: 30 * 86_400 },
];

/** The tier of a range; undefined for UNSPECIFIED (no history asked for). */
export const tierOf = (range: UsageRange): Tier | undefined => TIERS.find((x) => x.range === range);

/** The most points a range can answer: its span in steps, plus the partial bucket at each end. */
export const maxPoints = (t: Tier): number => t.spanS / t.stepS + 1;

/** One machine's figures at one moment; network rates only once two counter readings exist. */
export interface UsageReading {
  serviceId: string;
  at: Date;
  cpuPercent: number;
  memoryUsedMb: number;
  memoryTotalMb: number;
  diskUsedGb: number;
  diskTotalGb: number;
  /** Bytes a second received and sent since the previous reading; unset on the first. */
  rxBps?: number;
  txBps?: number;
}

/** Sums and counts of the readings that fell into one step of one tier (a usage_buckets row). */
export interface UsageBucket {
  serviceId: string;
  stepS: number;
  bucketAt: Date;
  samples: number;
  cpuPercentSum: number;
  memoryUsedMbSum: number;
  memoryTotalMb: number;
  diskUsedGbSum: number;
  diskTotalGb: number;
  netSamples: number;
  rxBpsSum: number;
  txBpsSum: number;
}

/** The start of the step a moment falls in: steps are aligned to the epoch, so every pass agrees. */
const bucketStart = (at: Date, stepS: number): Date =>
  new Date(Math.floor(at.getTime() / (stepS * 1000)) * stepS * 1000);

/** Two buckets of the same machine, tier and step as one: what the database's upsert also does. */
export function fold(a: UsageBucket, b: UsageBucket): UsageBucket {
  return {
    ...a,
    samples: a.samples + b.samples,
    cpuPercentSum: a.cpuPercentSum + b.cpuPercentSum,
    memoryUsedMbSum: a.memoryUsedMbSum + b.memoryUsedMbSum,
    // Sizes are the latest known (an upgrade changes them), not averaged.
    memoryTotalMb: b.memoryTotalMb,
    diskUsedGbSum: a.diskUsedGbSum + b.diskUsedGbSum,
    diskTotalGb: b.diskTotalGb,
    netSamples: a.netSamples + b.netSamples,
    rxBpsSum: a.rxBpsSum + b.rxBpsSum,
    txBpsSum: a.txBpsSum + b.txBpsSum,
  };
}

const bucketOf = (r: UsageReading, stepS: number): UsageBucket => {
  const net = r.rxBps !== undefined && r.txBps !== undefined;
  return {
    serviceId: r.serviceId,
    stepS,
    bucketAt: bucketStart(r.at, stepS),
    samples: 1,
    cpuPercentSum: r.cpuPercent,
    memoryUsedMbSum: r.memoryUsedMb,
    memoryTotalMb: r.memoryTotalMb,
    diskUsedGbSum: r.diskUsedGb,
    diskTotalGb: r.diskTotalGb,
    netSamples: net ? 1 : 0,
    rxBpsSum: net ? (r.rxBps ?? 0) : 0,
    txBpsSum: net ? (r.txBps ?? 0) : 0,
  };
};

/** Readings folded into one tier's buckets, one per machine and step, oldest first. */
export function downsample(readings: readonly UsageReading[], tier: Tier): UsageBucket[] {
  const byKey = new Map<string, UsageBucket>();
  for (const r of readings) {
    const b = bucketOf(r, tier.stepS);
    const key = `${b.serviceId}|${b.bucketAt.getTime()}`;
    const had = byKey.get(key);
    byKey.set(key, had ? fold(had, b) : b);
  }
  return [...byKey.values()].sort((a, b) => a.bucketAt.getTime() - b.bucketAt.getTime());
}

/** The buckets a range shows at `now`: those whose step overlaps the last `spanS` seconds. */
export function inRange(buckets: readonly UsageBucket[], tier: Tier, now: Date): UsageBucket[] {
  const from = now.getTime() - tier.spanS * 1000;
  return buckets.filter(
    (b) => b.bucketAt.getTime() + tier.stepS * 1000 > from && b.bucketAt.getTime() <= now.getTime(),
  );
}

/** The oldest bucket a tier keeps at `now`: its span plus one step back. */
export const oldestKept = (tier: Tier, now: Date): Date =>
  new Date(now.getTime() - (tier.spanS + tier.stepS) * 1000);
