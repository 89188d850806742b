import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { createLxdClient, LxdError } from "./client.ts";

// A stand-in daemon on a unix socket keeps what each request sent and answers `reply`.
describe("the LXD client's upload of a file", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "hb-lxd-client-"));
  const socketPath = path.join(dir, "lxd.sock");
  const seen: { method?: string; url?: string; headers: IncomingHttpHeaders; body: Buffer }[] = [];
  let reply: unknown = {};
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    seen.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks) });
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify(reply));
  });
  before(() => new Promise<void>((resolve) => server.listen(socketPath, resolve)));
  after(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("sends the file's bytes as the body with its length and answers the operation LXD started", async () => {
    const file = path.join(dir, "backup.tar.zst");
    const bytes = randomBytes(3 * 1024 * 1024 + 7);
    writeFileSync(file, bytes);
    reply = { type: "async", status_code: 100, operation: "/1.0/operations/op-1", metadata: {} };
    const c = createLxdClient({ name: "fake", socketPath });
    assert.equal(await c.upload("POST", "/1.0/instances", file, { "x-lxd-pool": "hb-btrfs" }), "op-1");
    const got = seen.at(-1);
    assert.equal(got?.method, "POST");
    assert.equal(got?.url, "/1.0/instances");
    assert.equal(got?.headers["content-length"], String(bytes.length));
    assert.equal(got?.headers["x-lxd-pool"], "hb-btrfs");
    assert.ok(got?.body.equals(bytes), "the body is the file, byte for byte");
  });

  it("refuses with LXD's error, and with the file's name when it cannot be read", async () => {
    const file = path.join(dir, "small.tar.zst");
    writeFileSync(file, "x");
    reply = { type: "error", error: "Storage pool not found", error_code: 404 };
    const c = createLxdClient({ name: "fake", socketPath });
    await assert.rejects(
      c.upload("POST", "/1.0/instances", file, {}),
      (err) => err instanceof LxdError && err.status === 404 && /Storage pool not found/.test(err.message),
    );
    await assert.rejects(
      c.upload("POST", "/1.0/instances", path.join(dir, "absent.tar.zst"), {}),
      /absent\.tar\.zst/,
    );
  });
});
