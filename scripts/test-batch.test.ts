import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { batched, LANES, laneFile, sharesLane, splitLanes } from "./test-batch.ts";

/** What lane `n`'s process prints given `lanes`, run as node --test runs a file. */
function laneOutput(n: number, lanes: string[][]): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, HB_TEST_LANES: JSON.stringify(lanes) };
  delete env.NODE_TEST_CONTEXT;
  return new Promise<string>((resolve) => {
    execFile(process.execPath, [path.join(import.meta.dirname, "..", laneFile(n))], { env }, (_err, stdout) =>
      resolve(stdout),
    );
  });
}

describe("the shared test processes", () => {
  it("takes the unit files and leaves the system tests, LXD's and those that start programs their own", () => {
    assert.equal(batched("services/billing/src/proration.test.ts"), true);
    assert.equal(batched("packages/platform/src/money.test.ts"), true);
    assert.equal(batched("scripts/stack-slots.test.ts"), true);
    assert.equal(batched("test/billing.test.ts"), false);
    assert.equal(batched("services/compute/src/lxd/driver.test.ts"), false);
    assert.equal(batched("scripts/service-memory-flags.test.ts"), false);
  });

  it("puts in a lane the system files that use only the shared stack, and keeps apart those that start something or hook before or around tests at the top", () => {
    const shared = `import { describe, it } from "node:test";\nimport { api } from "./helpers.ts";\nimport { signIn } from "./portal-pages.ts";\ndescribe("x", () => { before(() => {}); it("y", () => {}); });\n`;
    assert.equal(sharesLane("test/x.test.ts", shared), true);
    assert.equal(sharesLane("test/support/x.test.ts", 'import { eventually } from "./eventually.ts";'), true);
    assert.equal(sharesLane("test/x.test.ts", 'import { certFiles } from "../scripts/dev-certs.ts";'), true);
    assert.equal(
      sharesLane("test/x.test.ts", `${shared}after(() => sql.end());\n`),
      true,
      "a top-level after()",
    );
    assert.equal(sharesLane("services/billing/src/x.test.ts", shared), false, "a unit file");
    assert.equal(sharesLane("test/x.suite.ts", shared), false, "not a test file");
    for (const [why, text] of [
      ["a private stack", 'import { ownStack } from "./own-stack.ts";'],
      ["a browser", 'import {\n  launchBrowser,\n} from "./support/browser.ts";'],
      ["another program", 'import { execFile } from "node:child_process";'],
      ["a stack's ports", 'import { freePort } from "../scripts/stack.ts";'],
      ["a helper not known to start nothing", 'import { x } from "./support/new-helper.ts";'],
      ["a top-level before()", `${shared}before(() => sql\`select 1\`);\n`],
      ["a top-level afterEach()", `${shared}afterEach(() => {});\n`],
    ])
      assert.equal(sharesLane("test/x.test.ts", text), false, why);
  });

  it("splits the lane files into groups of about equal weight, every file in one", () => {
    const weight: Record<string, number> = { a: 90, b: 60, c: 50, d: 40, e: 10, f: 10 };
    const lanes = splitLanes(Object.keys(weight), (f) => weight[f] ?? 0, 3);
    assert.deepEqual(lanes.flat().sort(), ["a", "b", "c", "d", "e", "f"]);
    const totals = lanes.map((l) => l.reduce((sum, f) => sum + (weight[f] ?? 0), 0));
    assert.deepEqual(totals, [90, 80, 90]);
    assert.deepEqual(
      splitLanes(["a"], () => 1, 3),
      [["a"]],
      "no empty lane",
    );
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
          /(unit-batch|import-each)\.ts$/.test(file)
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

  it("has a lane's process for each of the LANES lanes", () => {
    for (let n = 1; n <= LANES; n++)
      assert.ok(existsSync(path.join(import.meta.dirname, "..", laneFile(n))), `${laneFile(n)} is there`);
  });

  it("runs in a lane's process the files listed for that lane, in their order", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hb-lane-"));
    try {
      const file = (n: string) => {
        const f = path.join(dir, `${n}.test.mjs`);
        writeFileSync(f, `import { it } from "node:test"; it("${n}", () => { console.log("ran ${n}"); });`);
        return f;
      };
      const lanes = [[file("a")], [file("b"), file("c")], [file("d")]];
      const out = await laneOutput(2, lanes);
      assert.deepEqual(out.match(/^ran \w$/gm), ["ran b", "ran c"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("starts no test of a lane before every file of it is imported", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hb-lane-"));
    try {
      const first = path.join(dir, "first.test.mjs");
      const slow = path.join(dir, "slow.test.mjs");
      writeFileSync(
        first,
        `import { describe, it } from "node:test"; describe("first", () => { it("runs", () => console.log("first test runs")); });`,
      );
      // An import that is synchronous work for a while, as compiling a file's modules is.
      writeFileSync(
        slow,
        `import { it } from "node:test"; const end = Date.now() + 300; while (Date.now() < end) {} console.log("slow file imported"); it("slow", () => {});`,
      );
      const out = await laneOutput(1, [[first, slow]]);
      assert.deepEqual(out.match(/^(first test runs|slow file imported)$/gm), [
        "slow file imported",
        "first test runs",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
