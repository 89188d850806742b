/**
 * One of the processes the system test files that use only the shared stack share
 * (scripts/test-batch.ts): its files, listed by scripts/run-tests.ts, run here one after another.
 */
import { importEach, laneFiles } from "../import-each.ts";

await importEach(laneFiles(3));
