/**
 * The order test files start in. With two cores and a few files at a time, the run ends when its
 * longest chain of files ends: a slow file that starts last keeps the run going alone. So the
 * slowest files start first (longest-processing-time-first), ranked by the times the previous run
 * on this checkout measured (scripts/test-times.ts keeps them), or by the list below on a fresh
 * checkout.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { LANES, laneFile } from "./test-batch.ts";

const root = path.resolve(import.meta.dirname, "..");

export const TIMES_FILE = path.join(root, "node_modules", ".cache", "hb-test-times.json");

/**
 * The slowest files of a full run, slowest first, for a checkout with no times of its own: the
 * durations of a fresh clone's `.ci/run` on two cores (2026-12-02, docs/benchmarks.md). A long
 * file missing here started in name order: the property-based billing file (83 s) started at 277 s
 * of a 403 s run.
 */
const KNOWN_SLOW = [
  "test/faults.test.ts",
  "services/compute/src/lxd/driver.test.ts",
  "test/lxd-vps.test.ts",
  // The system files that share processes (scripts/test-batch.ts), 60-92 s each.
  ...Array.from({ length: LANES }, (_, i) => laneFile(i + 1)),
  "test/billing-invariants.test.ts",
  "test/portal-browser.test.ts",
  "scripts/unit-batch.ts",
  "test/billing-cycle.test.ts",
  "services/compute/src/lxd/network.test.ts",
  "test/looks-browser.test.ts",
  "test/portal-customer.test.ts",
  "test/payments-card.test.ts",
  "test/sdk-cli-packed.test.ts",
  "test/machine-records.test.ts",
  "test/money-holes.test.ts",
  "test/key-table.test.ts",
  "test/service-lifecycle.test.ts",
  "services/compute/src/lxd/backups.test.ts",
  "test/order-round-trips.test.ts",
  "test/replicas.test.ts",
  "test/company-wide.test.ts",
];

/** Earlier runs' durations by file (relative to the repository), where kept. */
export function knownTimes(file = TIMES_FILE): Map<string, number> {
  try {
    const times = JSON.parse(readFileSync(file, "utf8")) as { file: string; durationMs: number }[];
    return new Map(times.map((t) => [t.file, t.durationMs]));
  } catch {
    return new Map();
  }
}

/**
 * `files` (relative to the repository) slowest first: by measured time where every file has one,
 * else the known slow files first and the rest in name order.
 */
export function slowestFirst(files: string[], times = knownTimes()): string[] {
  const byName = [...files].sort();
  if (byName.every((f) => times.has(f)))
    return byName.sort((a, b) => (times.get(b) ?? 0) - (times.get(a) ?? 0));
  const rank = (f: string) => {
    const i = KNOWN_SLOW.indexOf(f);
    return i === -1 ? KNOWN_SLOW.length : i;
  };
  return byName.sort((a, b) => rank(a) - rank(b));
}
