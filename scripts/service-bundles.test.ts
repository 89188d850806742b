import assert from "node:assert/strict";
import { existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { bundleFile } from "./bundle-file.ts";
import { buildBundles, removeOldFolders, withOwnImportMeta } from "./service-bundles.ts";

describe("service bundles", () => {
  // Inside the checkout, as the run's bundles are, so that node_modules/ resolves from them.
  const dir = path.resolve(import.meta.dirname, "..", ".tmp", `bundle-test-${process.pid}`);
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("gives each module its own import.meta.dirname, filename and url", () => {
    const file = "/srv/app/services/x/src/db/m.ts";
    assert.equal(
      withOwnImportMeta(
        "const a = import.meta.dirname, b = import.meta.url, c = import.meta.filename;",
        file,
      ),
      `const a = "/srv/app/services/x/src/db", b = "file:///srv/app/services/x/src/db/m.ts", c = "${file}";`,
    );
  });

  it("bundles modules that read files beside them and CommonJS that requires Node's modules", async () => {
    const src = path.join(dir, "src");
    mkdirSync(path.join(src, "db"), { recursive: true });
    writeFileSync(
      path.join(src, "db", "where.ts"),
      "import path from 'node:path';\nexport const where: string = path.join(import.meta.dirname, 'migrations');\n",
    );
    writeFileSync(path.join(src, "eol.cjs"), "module.exports = require('node:os').EOL;\n");
    writeFileSync(
      path.join(src, "main.ts"),
      "import eol from './eol.cjs';\nimport { where } from './db/where.ts';\nexport { eol, where };\n",
    );
    const out = path.join(dir, "out");
    await buildBundles(out, { svc: path.join(src, "main.ts") });
    const bundled = (await import(pathToFileURL(bundleFile(out, "svc")).href)) as {
      eol: string;
      where: string;
    };
    assert.equal(bundled.where, path.join(src, "db", "migrations"));
    assert.equal(bundled.eol, "\n");
  });

  it("removes the bundle folders a killed run left a day ago, and no newer one", async () => {
    const parent = path.join(dir, "runs");
    const old = path.join(parent, "old");
    const recent = path.join(parent, "recent");
    mkdirSync(old, { recursive: true });
    mkdirSync(recent, { recursive: true });
    const dayAndMore = new Date(Date.now() - 25 * 3600_000);
    utimesSync(old, dayAndMore, dayAndMore);
    await removeOldFolders(parent);
    assert.equal(existsSync(old), false);
    assert.equal(existsSync(recent), true);
  });
});
