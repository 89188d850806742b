import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { batched } from "./test-batch.ts";

describe("the unit files' shared process", () => {
  it("takes the unit files and leaves the system tests, LXD's and those that start programs their own", () => {
    assert.equal(batched("services/billing/src/proration.test.ts"), true);
    assert.equal(batched("packages/platform/src/money.test.ts"), true);
    assert.equal(batched("scripts/stack-slots.test.ts"), true);
    assert.equal(batched("test/billing.test.ts"), false);
    assert.equal(batched("services/compute/src/lxd/driver.test.ts"), false);
    assert.equal(batched("scripts/service-memory-flags.test.ts"), false);
  });

  it("reports each test under its own file, and a file that does not load without losing the next", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hb-batch-"));
    try {
      const files = ["a", "broken", "b"].map((n) => path.join(dir, `${n}.test.mjs`));
      writeFileSync(
        files[0],
        `import { it } from "node:test"; it("a passes", () => {}); it("a fails", () => { throw new Error("a"); });`,
      );
      writeFileSync(files[1], "this is not JavaScript (");
      writeFileSync(files[2], `import { it } from "node:test"; it("b passes", () => {});`);
      // A reporter that prints each file-level verdict with the file the test is in.
      const reporter = path.join(dir, "reporter.mjs");
      writeFileSync(
        reporter,
        `export default async function* (source) {
          for await (const e of source)
            if ((e.type === "test:pass" || e.type === "test:fail") && e.data.nesting === 0 && e.data.file)
              yield JSON.stringify([e.type, e.data.name, e.data.file]) + "\\n";
        }`,
      );
      // Run as node --test runs a file (run() is refused inside a test file).
      const env: NodeJS.ProcessEnv = { ...process.env, HB_UNIT_BATCH: JSON.stringify(files) };
      delete env.NODE_TEST_CONTEXT;
      const out = await new Promise<string>((resolve) => {
        execFile(
          process.execPath,
          [
            `--test-reporter=${pathToFileURL(reporter).href}`,
            path.join(import.meta.dirname, "unit-batch.ts"),
          ],
          { env },
          (_err, stdout) => resolve(stdout),
        );
      });
      const seen = out
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as [string, string, string])
        .map(([type, name, file]) =>
          file.endsWith("unit-batch.ts")
            ? `${type.slice(5)} ${path.basename(name)}`
            : `${type.slice(5)} ${name} in ${path.basename(file)}`,
        );
      assert.deepEqual(seen.sort(), [
        "fail a fails in a.test.mjs",
        "fail broken.test.mjs loads",
        "pass a passes in a.test.mjs",
        "pass b passes in b.test.mjs",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
