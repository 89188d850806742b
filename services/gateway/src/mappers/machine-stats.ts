import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { MachineStats, Traffic } from "@hb/contracts/hb/compute/v1/machines_pb";
import type { z } from "zod";
import type { machineStats, traffic } from "../wire/machine.ts";
import { byteCount, instanceStates } from "./compute-wire.ts";

/** GET /vps/{id}/stats, /dedicated/{id}/stats, /services/{id}/stats and the dispatcher's `stats`. */
export function machineStatsJson(s: MachineStats): z.infer<typeof machineStats> {
  return {
    cpu: { vcpus: s.vcpus, usage_percent: s.cpuUsagePercent },
    memory: { total_mb: s.memoryTotalMb, used_mb: s.memoryUsedMb },
    disk: { total_gb: s.diskTotalGb, used_gb: s.diskUsedGb },
    network: { rx_bytes: byteCount(s.network?.rxBytes ?? 0n), tx_bytes: byteCount(s.network?.txBytes ?? 0n) },
    state: instanceStates.name(s.state),
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
