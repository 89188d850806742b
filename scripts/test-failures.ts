/**
 * A node:test reporter that, at the end of the run, repeats each failed test with its file and the
 * first lines of its error. The spec reporter prints them where they happen, hundreds of lines up;
 * a CI log that keeps only its tail would otherwise say which tests failed but not why.
 */
import path from "node:path";
import type { TestEvent } from "node:test/reporters";

const root = path.resolve(import.meta.dirname, "..");
const MAX_FAILURES = 8;
const MAX_LINES = 12;

interface Failure {
  name: string;
  file: string;
  error: string;
}

/** The error's own message and its first stack lines, as one short block. */
export function describeError(error: unknown): string {
  // node:test wraps what a test threw; the test's own error is its cause.
  const inner = (error as { cause?: unknown } | undefined)?.cause ?? error;
  const text = inner instanceof Error ? (inner.stack ?? inner.message) : String(inner);
  // The runner's own frames say nothing about the test.
  const runnerFrame = /^\s*at (?:async )?(?:node:|.*\(node:|new (?:Safe)?Promise)/;
  return text
    .split("\n")
    .filter((line) => !runnerFrame.test(line))
    .slice(0, MAX_LINES)
    .join("\n");
}

export default async function* failureDigest(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const failures: Failure[] = [];
  for await (const event of source) {
    if (event.type !== "test:fail") continue;
    const { name, file, details } = event.data;
    const cause = (details.error as { failureType?: string } | undefined)?.failureType;
    // A suite fails because a test in it did: the test is the one to show.
    if (cause === "subtestsFailed") continue;
    failures.push({ name, file: file ? path.relative(root, file) : "", error: describeError(details.error) });
  }
  if (!failures.length) return;
  yield `\nFailed tests (${failures.length}${failures.length > MAX_FAILURES ? `, the first ${MAX_FAILURES}` : ""}):\n`;
  for (const f of failures.slice(0, MAX_FAILURES))
    yield `✖ ${f.name}  (${f.file})\n${f.error.replace(/^/gm, "    ")}\n`;
}
