import { timestampDate } from "@bufbuild/protobuf/wkt";
import {
  type MachineStats,
  type Traffic,
  type UsageHistory,
  UsageRange,
} from "@hb/contracts/hb/compute/v1/machines_pb";
import type { z } from "zod";
import type { machineStats, traffic, USAGE_RANGES, usageHistory } from "../wire/machine.ts";
import { byteCount, instanceStates } from "./compute-wire.ts";

/** GET /vps/{id}/stats, /dedicated/{id}/stats, /services/{id}/stats and the dispatcher's `stats`. */
export function machineStatsJson(s: MachineStats, history?: UsageHistory): z.infer<typeof machineStats> {
  return {
    cpu: { vcpus: s.vcpus, usage_percent: s.cpuUsagePercent },
    memory: { total_mb: s.memoryTotalMb, used_mb: s.memoryUsedMb },
    disk: { total_gb: s.diskTotalGb, used_gb: s.diskUsedGb },
    network: { rx_bytes: byteCount(s.network?.rxBytes ?? 0n), tx_bytes: byteCount(s.network?.txBytes ?? 0n) },
    state: instanceStates.name(s.state),
    ...(history ? { history: usageHistoryJson(history) } : {}),
  };
}

/** GET /dedicated/{id}/traffic: the month as the spec writes it, YYYY-MM. */
export function trafficJson(t: Traffic): z.infer<typeof traffic> {
  if (!t.periodStart) throw new Error("compute sent traffic without its month");
  return {
    period: timestampDate(t.periodStart).toISOString().slice(0, 7),
    rx_bytes: byteCount(t.network?.rxBytes ?? 0n),
    tx_bytes: byteCount(t.network?.txBytes ?? 0n),
  };
}

type RangeWord = (typeof USAGE_RANGES)[number];
/** ?range's words and the contract's ranges: the API writes spans as clouds do (1h, 24h, ...). */
const RANGES: Record<RangeWord, UsageRange> = {
  "1h": UsageRange.HOUR,
  "24h": UsageRange.DAY,
  "7d": UsageRange.WEEK,
  "30d": UsageRange.MONTH,
};
export const usageRange = (word: RangeWord | undefined): UsageRange =>
  word ? RANGES[word] : UsageRange.UNSPECIFIED;
const rangeWord = (r: UsageRange): RangeWord => {
  const word = (Object.keys(RANGES) as RangeWord[]).find((w) => RANGES[w] === r);
  if (!word) throw new Error(`compute sent usage history of range ${r}`);
  return word;
};

const iso = (t: Parameters<typeof timestampDate>[0] | undefined) => {
  if (!t) throw new Error("compute sent usage history without a time");
  return timestampDate(t).toISOString();
};

/** The history part of the stats routes' answer with ?range=. */
export function usageHistoryJson(h: UsageHistory): z.infer<typeof usageHistory> {
  return {
    range: rangeWord(h.range),
    step_seconds: h.stepSeconds,
    from: iso(h.from),
    to: iso(h.to),
    points: h.points.map((p) => ({
      at: iso(p.at),
      samples: p.samples,
      cpu_percent: p.cpuPercent,
      memory_used_mb: p.memoryUsedMb,
      memory_total_mb: p.memoryTotalMb,
      disk_used_gb: p.diskUsedGb,
      disk_total_gb: p.diskTotalGb,
      network_rx_bytes_per_second: p.rxBytesPerSecond ?? null,
      network_tx_bytes_per_second: p.txBytesPerSecond ?? null,
    })),
  };
}
