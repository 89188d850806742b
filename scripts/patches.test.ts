/**
 * The dependency patches in patches/ (patch-package) reach both places the code runs: a checkout,
 * through the root's postinstall, and the image, which installs with scripts off.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";

const root = path.resolve(import.meta.dirname, "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");

describe("dependency patches", () => {
  const patches = readdirSync(path.join(root, "patches")).filter((f) => f.endsWith(".patch"));

  it("are applied by npm install in a checkout and by the image's build", () => {
    assert.ok(patches.length > 0);
    const pkg = JSON.parse(read("package.json")) as { scripts: Record<string, string> };
    assert.equal(pkg.scripts.postinstall, "patch-package");
    const dockerfile = read("deploy/Dockerfile");
    assert.match(dockerfile, /^COPY patches \.\/patches$/m);
    assert.match(dockerfile, /patch-package@[0-9.]+ --error-on-fail/);
  });

  it("match the installed versions, and the installed postgres.js carries its patch", () => {
    for (const file of patches) {
      const [, name, version] = /^(.+)\+([^+]+)\.patch$/.exec(file) ?? [];
      assert.ok(name && version, file);
      // Read from node_modules: a package's exports may not offer its package.json.
      const manifest = JSON.parse(read(`node_modules/${name}/package.json`)) as { version: string };
      const installed = manifest.version;
      assert.equal(installed, version, `${file} is for ${name} ${version}, ${installed} is installed`);
    }
    // The write on a closed connection (docs/architecture.md): both builds postgres.js ships.
    for (const build of ["src", "cjs/src"]) {
      const text = readFileSync(path.join(root, "node_modules/postgres", build, "connection.js"), "utf8");
      assert.match(text, /function nextWrite\(fn\) \{[\s\S]{0,600}if \(!socket\) \{/, build);
    }
  });
});
