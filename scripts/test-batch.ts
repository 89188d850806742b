/**
 * Which test files share one process (scripts/unit-batch.ts): the unit tests outside test/, except
 * those that wait on something slow outside the process (LXD, a started stack, another program),
 * which keep a process of their own so that they wait beside the others instead of in line.
 */
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
