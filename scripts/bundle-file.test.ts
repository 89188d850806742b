import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, it } from "node:test";
import { adminEntry, bundleFile } from "./bundle-file.ts";

describe("the admin command a test runs", () => {
  const before = process.env.HB_SERVICE_BUNDLES;
  afterEach(() => {
    if (before === undefined) delete process.env.HB_SERVICE_BUNDLES;
    else process.env.HB_SERVICE_BUNDLES = before;
  });

  it("is the run's bundle where HB_SERVICE_BUNDLES names a folder of them", () => {
    process.env.HB_SERVICE_BUNDLES = "/tmp/hb-bundles-x";
    assert.equal(adminEntry(), bundleFile("/tmp/hb-bundles-x", "admin"));
    assert.equal(adminEntry(), "/tmp/hb-bundles-x/admin.mjs");
  });

  it("is scripts/admin.ts without one", () => {
    delete process.env.HB_SERVICE_BUNDLES;
    assert.equal(adminEntry(), path.resolve(import.meta.dirname, "admin.ts"));
    assert.ok(existsSync(adminEntry()));
  });
});
