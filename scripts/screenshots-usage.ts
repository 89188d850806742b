/**
 * An hour of usage history for the demo machines, so the screenshots' charts have lines. The demo
 * machines were created a moment ago and compute samples once a minute, so the script runs
 * compute's own sampler (startUsageSampler with the simulator driver, the same upsert into the
 * tiers' buckets) once per past step, with the clock set to that step: the simulator's figures are
 * keyed on the clock's minute, so the lines vary as a running machine's would. No hand-written SQL.
 */
import { mock } from "node:test";
import { connectDb, createLogger } from "@hb/platform";
import type { Drivers } from "../services/compute/src/driver.ts";
import { createSimulatorDriver } from "../services/compute/src/simulator.ts";
import { startUsageSampler } from "../services/compute/src/usage-sampler.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export async function seedUsageHistory(databaseUrl: string, now = Date.now()): Promise<void> {
  const sql = connectDb(databaseUrl, "compute", 1);
  const simulator = createSimulatorDriver({ buildMs: 0, actionMs: 0, reinstallMs: 0 });
  const drivers: Drivers = {
    simulator: {
      ...simulator,
      // The simulator's network counters grow from the machine's creation; the history pretends
      // the machine ran through the hour before it, so its network chart has a rate to show.
      stats: (m) => simulator.stats({ ...m, created_at: new Date(m.created_at.getTime() - 2 * HOUR) }),
    },
  };
  // The interval never fires: each pass below is called with its own time.
  const sampler = startUsageSampler(sql, drivers, createLogger("screenshots", "warn"), 2 ** 31 - 1);
  // Once a minute through the last hour, as compute's own sampling does (the hour chart's step).
  const times: number[] = [];
  for (let t = now - HOUR; t < now; t += MINUTE) times.push(t);
  mock.timers.enable({ apis: ["Date"], now: times[0] });
  try {
    for (const t of times) {
      mock.timers.setTime(t);
      await sampler.pass(new Date(t));
    }
  } finally {
    mock.timers.reset();
    await sampler.stop();
    await sql.end({ timeout: 5 });
  }
}
