/**
 * Where `npm test`'s bundles are (scripts/service-bundles.ts makes them): one ES module per
 * program in the folder HB_SERVICE_BUNDLES names. Kept apart from scripts/stack.ts so that a test
 * that only runs the admin command does not load the stack's modules.
 */
import path from "node:path";

/** A program's bundle in a folder of them. */
export const bundleFile = (dir: string, name: string) => path.join(dir, `${name}.mjs`);

const root = path.resolve(import.meta.dirname, "..");

/**
 * What to run of program `name`: its bundle where HB_SERVICE_BUNDLES names a folder of them (made
 * by `npm test`), else `source`. Read at each launch.
 */
export function bundleOr(name: string, source: string): string {
  const bundles = process.env.HB_SERVICE_BUNDLES;
  return bundles ? bundleFile(bundles, name) : source;
}

/**
 * The admin command as a test runs it. From source a call cost 0.55-0.74 CPU-s of module loading,
 * from the bundle 0.20-0.27 (`--help`, three of each, 2026-11-30).
 */
export const adminEntry = (): string => bundleOr("admin", path.join(root, "scripts", "admin.ts"));
