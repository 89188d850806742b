/**
 * The test runner proper, started by scripts/test.ts once the stack is up: runs the given test
 * files slowest first, a few processes at a time (a file alone, or several sharing one:
 * scripts/test-batch.ts), and prints each process's time at the end.
 * node --test would run them in name order; node:test's run() keeps the order given.
 *
 * Usage: node --conditions=hb-source scripts/run-tests.ts <file>...
 */
import { createWriteStream, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { run } from "node:test";
import { spec } from "node:test/reporters";
import { batched, laneFile, sharesLane, splitLanes } from "./test-batch.ts";
import failureDigest from "./test-failures.ts";
import { knownTimes, slowestFirst } from "./test-order.ts";
import fileTimes from "./test-times.ts";

const root = path.resolve(import.meta.dirname, "..");
const given = process.argv.slice(2).map((f) => path.relative(root, path.resolve(f)));
// The unit files run in one process (scripts/test-batch.ts), listed to it in HB_UNIT_BATCH, and the
// system files that use only the shared stack in LANES processes, listed to them in HB_TEST_LANES;
// a single file given alone keeps its own, and HB_TEST_BATCH=0 gives every file its own.
const UNIT_BATCH = "scripts/unit-batch.ts";
const sharing = process.env.HB_TEST_BATCH !== "0";
const inBatch = sharing ? given.filter(batched) : [];
const batch = inBatch.length > 1 ? inBatch : [];
if (batch.length) process.env.HB_UNIT_BATCH = JSON.stringify(batch.map((f) => path.join(root, f)));
const inLanes = sharing ? given.filter((f) => sharesLane(f, readFileSync(path.join(root, f), "utf8"))) : [];
// Balanced by each file's last time where one is kept (a run with HB_TEST_BATCH=0 keeps them),
// else by its size: a file's tests take about as long as it is long.
const times = knownTimes();
const lanes =
  inLanes.length > 1
    ? splitLanes(inLanes, (f) => times.get(f) ?? statSync(path.join(root, f)).size / 100)
    : [];
if (lanes.length)
  process.env.HB_TEST_LANES = JSON.stringify(lanes.map((l) => l.map((f) => path.join(root, f))));
const laned = lanes.flat();
const files = slowestFirst([
  ...given.filter((f) => !batch.includes(f) && !laned.includes(f)),
  ...(batch.length ? [UNIT_BATCH] : []),
  ...lanes.map((_, i) => laneFile(i + 1)),
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
