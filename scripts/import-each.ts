/**
 * Imports test files one after another into this process (scripts/unit-batch.ts and the lanes in
 * scripts/test-lanes/): their tests register here and run in turn, each reported under its own
 * file. A file that does not load fails as a test named after it, and the files after it still run.
 */
import { before, test } from "node:test";
import { pathToFileURL } from "node:url";

/**
 * No test starts before every file is imported. node:test starts the first file's tests as soon
 * as they are registered, and an import is long stretches of synchronous work (compiling and
 * running modules) in which nothing else in the process runs: on a loaded host a test's first
 * RPCs missed their deadlines "waiting for name resolution" while the next files were imported.
 */
export async function importEach(files: string[]): Promise<void> {
  const allImported = Promise.withResolvers<void>();
  before(() => allImported.promise);
  for (const file of files) {
    try {
      await import(pathToFileURL(file).href);
    } catch (err) {
      test(`${file} loads`, () => {
        throw err;
      });
    }
  }
  allImported.resolve();
}

/** Lane `n`'s files (absolute paths), which scripts/run-tests.ts lists in HB_TEST_LANES. */
export function laneFiles(n: number): string[] {
  const lanes = JSON.parse(process.env.HB_TEST_LANES ?? "[]") as string[][];
  return lanes[n - 1] ?? [];
}
