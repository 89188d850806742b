import { apiError } from "@hb/platform";
import type { MachineStats } from "../driver.ts";
import type { MachineRow } from "../machines.ts";
import { LxdError, type LxdInstanceState } from "./client.ts";
import type { LxdContext } from "./context.ts";
import { instanceName } from "./instance.ts";

/**
 * A machine's live figures. The processor's share needs two readings: the last one taken for the
 * machine (kept here), or a second one taken shortly after the first.
 */
export function createStatsReader(d: LxdContext) {
  const cpuSamples = new Map<string, { usage: number; at: number }>();
  return async function stats(m: MachineRow): Promise<MachineStats> {
    const c = d.clientOf(d.machineState(m).endpoint);
    const name = instanceName(m.service_id);
    const read = () => c.get<LxdInstanceState>(`/1.0/instances/${name}/state`);
    let s: LxdInstanceState;
    try {
      s = await read();
    } catch (err) {
      throw apiError("PROVIDER_ERROR", err instanceof LxdError ? `LXD: ${err.message}` : "LXD failed");
    }
    const now = Date.now();
    let prev = cpuSamples.get(name);
    if (!prev || now - prev.at > 300_000) {
      // No recent reading to compare with: take a second one shortly after.
      prev = { usage: s.cpu.usage, at: now };
      await new Promise((r) => setTimeout(r, 200));
      s = await read();
    }
    const at = Date.now();
    cpuSamples.set(name, { usage: s.cpu.usage, at });
    const elapsedNs = Math.max(1, (at - prev.at) * 1e6);
    const percent = Math.min(100, Math.max(0, ((s.cpu.usage - prev.usage) / elapsedNs / m.vcpus) * 100));
    let rx = 0;
    let tx = 0;
    for (const [nic, net] of Object.entries(s.network ?? {})) {
      if (nic === "lo") continue;
      rx += net.counters.bytes_received;
      tx += net.counters.bytes_sent;
    }
    return {
      cpu: { vcpus: m.vcpus, usage_percent: Math.round(percent) },
      memory: { total_mb: m.memory_mb, used_mb: Math.round(s.memory.usage / 2 ** 20) },
      disk: { total_gb: m.disk_gb, used_gb: Math.round(((s.disk?.root?.usage ?? 0) / 2 ** 30) * 100) / 100 },
      network: { rx_bytes: rx, tx_bytes: tx },
    };
  };
}
