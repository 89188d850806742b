/**
 * Imports test files one after another into this process (scripts/unit-batch.ts and the lanes in
 * scripts/test-lanes/): their tests register here and run in turn, each reported under its own
 * file. A file that does not load fails as a test named after it, and the files after it still run.
 */
import { test } from "node:test";
import { pathToFileURL } from "node:url";

export async function importEach(files: string[]): Promise<void> {
  for (const file of files) {
    try {
      await import(pathToFileURL(file).href);
    } catch (err) {
      test(`${file} loads`, () => {
        throw err;
      });
    }
  }
}

/** Lane `n`'s files (absolute paths), which scripts/run-tests.ts lists in HB_TEST_LANES. */
export function laneFiles(n: number): string[] {
  const lanes = JSON.parse(process.env.HB_TEST_LANES ?? "[]") as string[][];
  return lanes[n - 1] ?? [];
}
