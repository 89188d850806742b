import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { globSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { SERVICE_MEMORY_ENV, SERVICE_NODE_ARGS } from "./stack.ts";

const root = path.resolve(import.meta.dirname, "..");
const dockerfile = readFileSync(path.join(root, "deploy", "Dockerfile"), "utf8");

/** The value of `NAME=value` on the image's `ENV NODE_OPTIONS=… MALLOC_ARENA_MAX=…` line. */
function imageEnv(name: string): string | undefined {
  for (const line of dockerfile.split("\n")) {
    if (!line.startsWith("ENV ") || !line.includes("NODE_OPTIONS=")) continue;
    // NODE_OPTIONS's value holds spaces, so it is quoted; the other settings are single words.
    const quoted = new RegExp(`${name}="([^"]*)"`).exec(line);
    if (quoted) return quoted[1];
    const bare = new RegExp(`${name}=(\\S+)`).exec(line);
    if (bare) return bare[1];
  }
  return undefined;
}

describe("the services' memory settings", () => {
  it("are the same in the image as in the local stack", () => {
    assert.equal(imageEnv("NODE_OPTIONS"), SERVICE_NODE_ARGS);
    assert.equal(imageEnv("MALLOC_ARENA_MAX"), SERVICE_MEMORY_ENV.MALLOC_ARENA_MAX);
  });

  it("give each service a bounded heap, far above its live heap", () => {
    // V8 refuses a misspelt flag at start, so this also proves the flags are taken.
    const limit = Number(
      execFileSync(
        process.execPath,
        [
          ...SERVICE_NODE_ARGS.split(" "),
          "-e",
          "process.stdout.write(String(require('node:v8').getHeapStatistics().heap_size_limit))",
        ],
        { encoding: "utf8" },
      ),
    );
    const mb = limit / 2 ** 20;
    // Below V8's default for a large machine (about 4 GB here), which let the old generation hold
    // up to four times the live heap in garbage (docs/benchmarks.md, "Memory"); above the 50 MB
    // live heap measured at the largest VPS page, with room to spare.
    assert.ok(mb <= 300, `heap limit ${mb.toFixed(0)} MB`);
    assert.ok(mb >= 200, `heap limit ${mb.toFixed(0)} MB`);
  });

  it("has the image's compile cache hold every TypeScript module a service imports lazily", () => {
    // The image fills the cache by starting each entry point, which stops at its configuration
    // check: a module imported later would be type-stripped at every start (+13 MB RSS).
    const lazy = globSync("{packages,services}/*/src/**/*.ts", { cwd: root })
      .filter((f) => !f.endsWith(".test.ts"))
      .flatMap((f) =>
        [...readFileSync(path.join(root, f), "utf8").matchAll(/\bimport\("(\.{1,2}\/[^"]+\.ts)"\)/g)].map(
          (m) => path.relative(root, path.resolve(root, path.dirname(f), m[1])),
        ),
      );
    assert.ok(lazy.length > 0, "the scan finds the lazily imported request rules");
    for (const file of lazy)
      assert.ok(dockerfile.includes(`/app/${file}`), `${file} is not warmed in deploy/Dockerfile`);
  });
});
