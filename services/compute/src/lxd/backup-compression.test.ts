import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import type { JobRow } from "../driver.ts";
import { backupFile, createSteps } from "./backups.ts";
import { type LxdClient, LxdError, type LxdOperation } from "./client.ts";

const ZSTD = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3]);
const GZIP = Buffer.from([0x1f, 0x8b, 0x08, 0, 1, 2, 3]);

/**
 * A daemon whose host has `zstd` or not (LXD 5.0 then refuses the algorithm: 400 "Invalid
 * compression algorithm"), exporting a backup made with the algorithm it accepted.
 */
function fakeLxd(hasZstd: boolean, refusal?: LxdError) {
  const compressions: string[] = [];
  let made = "";
  const client: LxdClient = {
    endpoint: { name: "fake", socketPath: "/nonexistent" },
    async get<T>() {
      return {} as T;
    },
    async submit(method, _path, body) {
      if (method === "DELETE") {
        if (!made) throw new LxdError("not found", 404);
        return "";
      }
      const algorithm = (body as { compression_algorithm: string }).compression_algorithm;
      compressions.push(algorithm);
      if (refusal) throw refusal;
      if (algorithm === "zstd" && !hasZstd)
        throw new LxdError(`Invalid compression algorithm "${algorithm}"`, 400);
      made = algorithm;
      return "backup-op";
    },
    async send() {
      return "";
    },
    async operation(id) {
      return { id, status: "Success", err: "" } as LxdOperation;
    },
    async download(_path, file) {
      writeFileSync(file, made === "zstd" ? ZSTD : GZIP);
    },
    async upload() {
      return "";
    },
  };
  return { client, compressions };
}

describe("a backup's compression", () => {
  const backupDir = mkdtempSync(path.join(os.tmpdir(), "hb-backup-compression-"));
  after(() => rmSync(backupDir, { recursive: true, force: true }));
  const steps = (c: LxdClient, copyId: string) =>
    createSteps({
      c,
      url: "/1.0/instances/hb-svc",
      backupDir,
      serviceId: "svc",
      job: { action: "backup_create", copy_id: copyId } as JobRow,
    });

  it("is zstd where the host has it, the file named .tar.zst", async () => {
    const lxd = fakeLxd(true);
    const copyId = randomUUID();
    const [backup, exported] = steps(lxd.client, copyId);
    assert.equal(await backup.act(), "backup-op");
    await exported.act();
    assert.deepEqual(lxd.compressions, ["zstd"]);
    assert.ok(existsSync(backupFile(backupDir, "svc", copyId)));
  });

  it("falls back to gzip where LXD refuses zstd (a host set up before it), the file named .tar.gz", async () => {
    const lxd = fakeLxd(false);
    const copyId = randomUUID();
    const [backup, exported] = steps(lxd.client, copyId);
    assert.equal(await backup.act(), "backup-op");
    await exported.act();
    assert.deepEqual(lxd.compressions, ["zstd", "gzip"]);
    assert.deepEqual(
      readdirSync(backupDir).filter((f) => f.includes(copyId)),
      [`svc-${copyId}.tar.gz`],
      "no .tar.zst holding gzip, and no part left",
    );
  });

  it("is not retried with gzip when LXD refuses the backup for another reason", async () => {
    const lxd = fakeLxd(true, new LxdError("Failed creating instance backup: no space left on device", 500));
    const [backup] = steps(lxd.client, randomUUID());
    await assert.rejects(backup.act(), /no space left/);
    assert.deepEqual(lxd.compressions, ["zstd"]);
  });
});
