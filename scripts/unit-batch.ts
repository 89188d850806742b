/**
 * One process for the unit test files (scripts/test-batch.ts says which): each is imported here
 * in turn, so its tests register in this process and run one after another, reported under their
 * own file. A unit file alone costs a process start and the import of what it tests, mostly the
 * same modules as its neighbours' (`@hb/platform` alone is 0.45-0.8 CPU-s); here they are loaded
 * once. The list comes in HB_UNIT_BATCH (a JSON array of absolute paths).
 */
import { importEach } from "./import-each.ts";

await importEach(JSON.parse(process.env.HB_UNIT_BATCH ?? "[]") as string[]);
