/**
 * The test runner proper, started by scripts/test.ts once the stack is up: runs the given test
 * files (one process each) slowest first, a few at a time, and prints each file's time at the end.
 * node --test would run them in name order; node:test's run() keeps the order given.
 *
 * Usage: node --conditions=hb-source scripts/run-tests.ts <file>...
 */
import { createWriteStream } from "node:fs";
import path from "node:path";
import { run } from "node:test";
import { spec } from "node:test/reporters";
import { batched } from "./test-batch.ts";
import failureDigest from "./test-failures.ts";
import { slowestFirst } from "./test-order.ts";
import fileTimes from "./test-times.ts";

const root = path.resolve(import.meta.dirname, "..");
const given = process.argv.slice(2).map((f) => path.relative(root, path.resolve(f)));
// The unit files run in one process (scripts/test-batch.ts), listed to it in HB_UNIT_BATCH; a
// single file given alone keeps its own, and HB_TEST_BATCH=0 gives every file its own.
const UNIT_BATCH = "scripts/unit-batch.ts";
const inBatch = process.env.HB_TEST_BATCH === "0" ? [] : given.filter(batched);
const batch = inBatch.length > 1 ? inBatch : [];
if (batch.length) process.env.HB_UNIT_BATCH = JSON.stringify(batch.map((f) => path.join(root, f)));
const files = slowestFirst([
  ...given.filter((f) => !batch.includes(f)),
  ...(batch.length ? [UNIT_BATCH] : []),
]);
const concurrency = Number(process.env.HB_TEST_CONCURRENCY ?? 4);
const namePatterns = JSON.parse(process.env.HB_TEST_NAME_PATTERNS ?? "[]") as string[];

const stream = run({
  files: files.map((f) => path.join(root, f)),
  concurrency,
  // A hang detector for each test and each hook (not a describe()'s sum): at a load average of 25
  // on two cores, before() hooks that start private stacks have needed more than 120 s.
  timeout: 300_000,
  ...(namePatterns.length ? { testNamePatterns: namePatterns } : {}),
});
// The run's own summary (the one with no file) says whether everything passed, as node --test's
// exit code does: todo tests that fail do not fail the run.
let passed = false;
stream.on("test:summary", (data) => {
  if (data.file === undefined) passed = data.success;
});
// Three readers of one stream add more 'end' listeners than Node's default of 10 before it warns
// of a leak (a MaxListenersExceededWarning in every run's output); they are all wanted.
stream.setMaxListeners(20);
stream.compose(spec()).pipe(process.stdout);
stream.compose(fileTimes).pipe(process.stdout);
// scripts/test.ts prints the digest last, after the services' output, where a log's tail keeps it.
const digestFile = process.env.HB_TEST_FAILURES_FILE;
stream.compose(failureDigest).pipe(digestFile ? createWriteStream(digestFile) : process.stdout);
process.on("beforeExit", () => {
  process.exitCode = passed ? 0 : 1;
});
