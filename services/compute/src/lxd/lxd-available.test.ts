/**
 * The LXD tests' wait for `.ci/run`'s image build: a test that names only images already imported
 * starts at once while the others are still being built.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { createLxdClient } from "./client.ts";
import { LXD_SOCKET, lxdUnavailable } from "./lxd-available.ts";

const busyboxImported =
  existsSync(LXD_SOCKET) &&
  (await createLxdClient({ name: "probe", socketPath: LXD_SOCKET })
    .get("/1.0/images/aliases/busybox")
    .then(
      () => true,
      () => false,
    ));

describe("waiting for the LXD images", {
  skip: !busyboxImported && "needs LXD with the busybox image (npm run lxd:setup && npm run images)",
}, () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "hb-lxd-images-"));
  const status = path.join(dir, "status");
  const saved = process.env.HB_LXD_IMAGES_STATUS;
  after(() => {
    if (saved === undefined) delete process.env.HB_LXD_IMAGES_STATUS;
    else process.env.HB_LXD_IMAGES_STATUS = saved;
    rmSync(dir, { recursive: true, force: true });
  });

  it("does not wait for a build still running when the images asked for are imported", async () => {
    process.env.HB_LXD_IMAGES_STATUS = status;
    const started = Date.now();
    assert.equal(await lxdUnavailable(["busybox"]), undefined);
    // The build's status file never appears here: waiting for it would take 5 minutes.
    assert.ok(Date.now() - started < 60_000);
  });

  it("waits for a missing image until the build ends, then says why it is missing", async () => {
    process.env.HB_LXD_IMAGES_STATUS = status;
    const answer = lxdUnavailable(["busybox", "hb-never-built"]);
    let settled = false;
    void answer.then(() => {
      settled = true;
    });
    // Still waiting after several of its polls.
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(settled, false);
    writeFileSync(status, "3\n");
    assert.match((await answer) ?? "", /building the LXD images failed with exit code 3/);
  });
});
