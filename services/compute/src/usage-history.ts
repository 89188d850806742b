import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type UsageHistory,
  UsageHistorySchema,
  type UsageRange,
} from "@hb/contracts/hb/compute/v1/machines_pb";
import { apiError, type Sql } from "@hb/platform";
import { tierOf } from "./usage-tiers.ts";

type BucketRow = {
  bucket_at: Date;
  samples: number;
  cpu_percent_sum: number;
  memory_used_mb_sum: number;
  memory_total_mb: number;
  disk_used_gb_sum: number;
  disk_total_gb: number;
  net_samples: number;
  rx_bps_sum: number;
  tx_bps_sum: number;
};

/** Averages to two decimals: the readings' own precision, and a smaller answer. */
const avg = (sum: number, n: number) => Math.round((sum / n) * 100) / 100;

/** A machine's usage over a range from its tier's buckets, oldest first (at most maxPoints). */
export async function usageHistory(
  sql: Sql,
  serviceId: string,
  range: UsageRange,
  now = new Date(),
): Promise<UsageHistory> {
  const tier = tierOf(range);
  if (!tier) throw apiError("BAD_REQUEST", "Unknown usage range");
  const from = new Date(now.getTime() - tier.spanS * 1000);
  // A bucket overlapping the range's start counts: its step ends inside the range.
  const rows = await sql<BucketRow[]>`
    select bucket_at, samples, cpu_percent_sum, memory_used_mb_sum, memory_total_mb,
      disk_used_gb_sum, disk_total_gb, net_samples, rx_bps_sum, tx_bps_sum
    from usage_buckets
    where service_id = ${serviceId} and step_s = ${tier.stepS}
      and bucket_at > ${new Date(from.getTime() - tier.stepS * 1000)} and bucket_at <= ${now}
    order by bucket_at`;
  return create(UsageHistorySchema, {
    range,
    stepSeconds: tier.stepS,
    from: timestampFromDate(from),
    to: timestampFromDate(now),
    points: rows.map((r) => ({
      at: timestampFromDate(r.bucket_at),
      samples: r.samples,
      cpuPercent: avg(r.cpu_percent_sum, r.samples),
      memoryUsedMb: avg(r.memory_used_mb_sum, r.samples),
      memoryTotalMb: r.memory_total_mb,
      diskUsedGb: avg(r.disk_used_gb_sum, r.samples),
      diskTotalGb: r.disk_total_gb,
      ...(r.net_samples > 0
        ? {
            rxBytesPerSecond: avg(r.rx_bps_sum, r.net_samples),
            txBytesPerSecond: avg(r.tx_bps_sum, r.net_samples),
          }
        : {}),
    })),
  });
}
