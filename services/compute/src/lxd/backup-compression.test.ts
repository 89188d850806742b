import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import type { JobRow } from "../driver.ts";
import { BACKUP_COMPRESSION, createSteps } from "./backups.ts";
import { type LxdClient, LxdError, type LxdOperation } from "./client.ts";

const ZSTD = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3]);
const GZIP = Buffer.from([0x1f, 0x8b, 0x08, 0, 1, 2, 3]);

/** A daemon that makes a backup and exports `exported` as its file. */
function fakeLxd(exported: Buffer) {
  const compressions: string[] = [];
  let made = false;
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
      compressions.push((body as { compression_algorithm: string }).compression_algorithm);
      made = true;
      return "backup-op";
    },
    async send() {
      return "";
    },
    async operation(id) {
      return { id, status: "Success", err: "" } as LxdOperation;
    },
    async download(_path, file) {
      writeFileSync(file, exported);
    },
    async upload() {
      return "";
    },
  };
  return { client, compressions };
}

describe("a backup's exported file", () => {
  const backupDir = mkdtempSync(path.join(os.tmpdir(), "hb-backup-compression-"));
  after(() => rmSync(backupDir, { recursive: true, force: true }));
  const exportOnce = async (exported: Buffer) => {
    const lxd = fakeLxd(exported);
    const copyId = randomUUID();
    const [backup, exportStep] = createSteps({
      c: lxd.client,
      url: "/1.0/instances/hb-svc",
      backupDir,
      serviceId: "svc",
      job: { action: "backup_create", copy_id: copyId } as JobRow,
    });
    assert.equal(await backup.act(), "backup-op");
    await exportStep.act();
    return {
      compressions: lxd.compressions,
      files: readdirSync(backupDir).filter((f) => f.includes(copyId)),
    };
  };

  it("is asked of LXD with gzip at its fastest level and named .tar.gz, no part left", async () => {
    const { compressions, files } = await exportOnce(GZIP);
    assert.deepEqual(compressions, [BACKUP_COMPRESSION]);
    assert.equal(BACKUP_COMPRESSION, "gzip -1");
    assert.equal(files.length, 1);
    assert.match(files[0], /^svc-[0-9a-f-]+\.tar\.gz$/);
  });

  it("is named by what it holds: zstd's is .tar.zst", async () => {
    const { files } = await exportOnce(ZSTD);
    assert.equal(files.length, 1);
    assert.match(files[0], /^svc-[0-9a-f-]+\.tar\.zst$/);
  });
});
