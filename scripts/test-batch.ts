/**
 * Which test files share a process. A file alone pays a process start and the import of the
 * project's modules (test/helpers.ts alone loads 576), about 0.7 CPU-s on an idle host before its
 * first test; files that share a process pay it once.
 *
 * - The unit test files outside test/ share one (scripts/unit-batch.ts), except those that wait
 *   on something slow outside the process (LXD, a started stack, another program), which keep a
 *   process of their own so that they wait beside the others instead of in line.
 * - The system test files in test/ that use only the shared stack share one of LANES processes
 *   (scripts/test-lanes/), where they run one after another. A file keeps its own process when it
 *   starts something (a private stack, a browser, servers, another program), since those wait on
 *   it beside the others, or when it has before(), beforeEach() or afterEach() hooks at its top
 *   level: in a shared process those would run for every file in it.
 */
import path from "node:path";

const OWN_PROCESS = [
  // LXD: containers built and started, minutes in all.
  /^services\/compute\/src\/lxd\//,
  // Start services or other programs and wait on them.
  /^scripts\/service-memory-flags\.test\.ts$/,
  /^scripts\/lint-homes\.test\.ts$/,
];

/** True for a file (relative to the repository) that runs in the shared unit process. */
export function batched(file: string): boolean {
  if (file.startsWith("test/")) return false;
  return !OWN_PROCESS.some((re) => re.test(file));
}

/** The system tests' shared processes: scripts/test-lanes/lane-<n>.ts for n = 1..LANES. */
export const LANES = 3;
export const laneFile = (n: number) => `scripts/test-lanes/lane-${n}.ts`;

/**
 * The modules of test/ and scripts/ a file in a lane may import: they start nothing (a helper that
 * starts a stack, a browser or a program is not listed, so a file importing it keeps its own process).
 */
const LANE_HELPERS = new Set([
  "scripts/bench/billing-statements.ts",
  "scripts/db-roles.ts",
  "scripts/dev-certs.ts",
  "test/helpers.ts",
  "test/portal-pages.ts",
  "test/contract.ts",
  "test/api.ts",
  "test/billing-model/money.ts",
  "test/support/clients.ts",
  "test/support/eventually.ts",
  "test/support/held-build.ts",
  "test/support/pg-wire-proxy.ts",
  "test/support/raw-exchange.ts",
  "test/support/service-db.ts",
  "test/support/service-events.ts",
  "test/support/ssh-key-fixture.ts",
  "test/support/stripe-stand-in.ts",
  "test/support/test-database.ts",
]);

/** True for a system test file (relative to the repository, with its text) that can share a lane. */
export function sharesLane(file: string, text: string): boolean {
  if (!file.startsWith("test/") || !file.endsWith(".test.ts")) return false;
  // A top-level after() (a file's pool or sockets closed) runs when the lane's last file ends, which
  // ends the same things; before(), beforeEach() and afterEach() there would run for every file.
  if (/^(before|beforeEach|afterEach)\(/m.test(text)) return false;
  for (const [, spec] of text.matchAll(/^\s*(?:import|export)\b[^;]*?from\s+"([^"]+)"/gms)) {
    if (spec === "node:child_process") return false;
    if (!spec.startsWith(".")) continue;
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
    if ((target.startsWith("test/") || target.startsWith("scripts/")) && !LANE_HELPERS.has(target))
      return false;
  }
  return true;
}

/**
 * The lane files split into `lanes` groups of about equal length: longest first, each to the
 * group with the least so far. `weight` is a file's expected duration (its last time, or its size).
 */
export function splitLanes(files: string[], weight: (file: string) => number, lanes = LANES): string[][] {
  const groups = Array.from({ length: Math.min(lanes, files.length) }, () => ({
    total: 0,
    files: [] as string[],
  }));
  for (const f of [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))) {
    const lightest = groups.reduce((min, g) => (g.total < min.total ? g : min));
    lightest.files.push(f);
    lightest.total += weight(f);
  }
  return groups.map((g) => g.files.sort());
}
