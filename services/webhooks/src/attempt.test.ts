import assert from "node:assert/strict";
import type { LookupAddress } from "node:dns";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { attemptDelivery } from "./attempt.ts";

const BLOCKED = /blocked/;

describe("a delivery attempt", () => {
  let received = 0;
  const server = http.createServer((_req, res) => {
    received++;
    res.writeHead(204).end();
  });
  let port = 0;
  before(async () => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as { port: number }).port;
  });
  after(() => server.close());

  const attempt = (url: string, allowed: string[] = [], zone: Record<string, string> = {}) =>
    attemptDelivery(
      url,
      "{}",
      {},
      {
        timeoutMs: 2000,
        allowed: new Set(allowed),
        resolve: async (host): Promise<LookupAddress[]> => {
          if (!zone[host]) throw new Error("ENOTFOUND");
          return [{ address: zone[host], family: zone[host].includes(":") ? 6 : 4 }];
        },
      },
    );

  it("is blocked, without a connection, for every spelling of a loopback or private host", async () => {
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://[::7f00:1]:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://[64:ff9b::7f00:1]:${port}/`,
      `http://[2002:7f00:1::1]:${port}/`,
      `http://2130706433:${port}/`,
      `http://localhost.:${port}/`,
      `http://foo.localhost:${port}/`,
      `http://rebound.example:${port}/`,
    ]) {
      const r = await attempt(url, [], { "rebound.example": "10.20.30.40" });
      assert.equal(r.ok, false, url);
      assert.match(r.error ?? "", BLOCKED, url);
    }
    assert.equal(received, 0);
  });

  it("reaches a destination on the allowed list, and only at its exact host and port", async () => {
    const r = await attempt(`http://127.0.0.1:${port}/hook`, [`127.0.0.1:${port}`]);
    assert.deepEqual(r, { ok: true, status: 204 });
    assert.equal(received, 1);
    for (const url of [`http://localhost:${port}/`, `http://[::ffff:7f00:1]:${port}/`]) {
      const other = await attempt(url, [`127.0.0.1:${port}`], { localhost: "127.0.0.1" });
      assert.match(other.error ?? "", BLOCKED, url);
    }
    const named = await attempt(`http://localhost:${port}/`, [`localhost:${port}`], {
      localhost: "127.0.0.1",
    });
    assert.equal(named.ok, true);
    assert.equal(received, 2);
  });
});
