/**
 * A node:test reporter that times each test file (one process each) and, at the end, prints the
 * files from slowest to fastest with when each started, so the run's critical path is visible.
 * It also keeps the times (scripts/test-order.ts reads them to start the slowest files first).
 *
 * The file-level events are the ones node:test emits as they happen (a file's `test:dequeue` when
 * its process starts, its `test:complete` when it ends); the per-test events of a file that is not
 * first in line are buffered until its turn, so their arrival times say nothing.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { TestEvent } from "node:test/reporters";
import { knownTimes, TIMES_FILE } from "./test-order.ts";

export interface FileTime {
  file: string;
  /** ms after the first file started. */
  startMs: number;
  durationMs: number;
  failed: boolean;
}

const root = path.resolve(import.meta.dirname, "..");

export default async function* fileTimes(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const started = new Map<string, number>();
  const times: FileTime[] = [];
  let t0 = 0;
  for await (const event of source) {
    if (event.type !== "test:dequeue" && event.type !== "test:complete") continue;
    const { name, file, nesting } = event.data;
    // A file's own test is named after the file, at the top level.
    if (nesting !== 0 || !file || name !== file) continue;
    const now = Date.now();
    if (event.type === "test:dequeue") {
      t0 ||= now;
      started.set(file, now);
    } else {
      const duration = event.data.details.duration_ms;
      const start = started.get(file) ?? now - duration;
      times.push({
        file: path.relative(root, file),
        startMs: start - t0,
        durationMs: Math.round(duration),
        failed: !event.data.details.passed,
      });
    }
  }
  if (!times.length) return;
  times.sort((a, b) => b.durationMs - a.durationMs);
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`.padStart(8);
  const wall = Math.max(...times.map((t) => t.startMs + t.durationMs));
  yield `\nTest files by duration (started at, duration; ${times.length} files, ${s(wall).trim()} from the first start to the last end):\n`;
  for (const t of times)
    yield `${s(t.startMs)} ${s(t.durationMs)}  ${t.file}${t.failed ? "  (failed)" : ""}\n`;
  try {
    // A run of a few files updates their times and keeps the others'.
    const kept = knownTimes();
    for (const t of times) kept.set(t.file, t.durationMs);
    const all = [...kept].map(([file, durationMs]) => ({ file, durationMs }));
    mkdirSync(path.dirname(TIMES_FILE), { recursive: true });
    writeFileSync(TIMES_FILE, `${JSON.stringify(all, null, 1)}\n`);
  } catch {
    // The times only order the next run; a read-only checkout runs in the default order.
  }
}
