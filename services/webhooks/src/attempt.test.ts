import assert from "node:assert/strict";
import type { LookupAddress } from "node:dns";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { attemptDelivery } from "./attempt.ts";
import { watchDeadline, watchedDeadlines } from "./attempt-deadline.ts";

const BLOCKED = /blocked/;

describe("a delivery attempt", () => {
  let received = 0;
  const server = http.createServer((req, res) => {
    received++;
    if (req.url === "/redirect") res.writeHead(302, { location: "/elsewhere" }).end();
    else if (req.url === "/refuse") res.writeHead(503).end();
    else if (req.url === "/long") res.writeHead(200).end("x".repeat(1024 * 1024));
    else if (req.url !== "/hang") res.writeHead(204).end();
  });
  let port = 0;
  before(async () => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as { port: number }).port;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const attempt = (
    url: string,
    allowed: string[] = [],
    zone: Record<string, string> = {},
    timeoutMs = 2000,
  ) =>
    attemptDelivery(
      url,
      "{}",
      {},
      {
        timeoutMs,
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

  it("reports an answer that is not a 2xx, a redirect (not followed), a refused connection and no answer in time", async () => {
    const here = [`127.0.0.1:${port}`];
    const before = received;
    assert.deepEqual(await attempt(`http://127.0.0.1:${port}/refuse`, here), {
      ok: false,
      status: 503,
      error: "Endpoint answered HTTP 503",
    });
    assert.deepEqual(await attempt(`http://127.0.0.1:${port}/redirect`, here), {
      ok: false,
      status: 302,
      error: "Endpoint returned a redirect, not followed",
    });
    assert.equal(received, before + 2, "the redirect's target is never asked");
    const started = Date.now();
    const hung = await attempt(`http://127.0.0.1:${port}/hang`, here, {}, 300);
    assert.deepEqual(hung, { ok: false, error: "No answer within 0 s" });
    assert.ok(Date.now() - started >= 300, "not ended before its deadline");
    // A long answer is read up to a limit and dropped: its status stands.
    assert.deepEqual(await attempt(`http://127.0.0.1:${port}/long`, here), { ok: true, status: 200 });
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const closedPort = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));
    const refused = await attempt(`http://127.0.0.1:${closedPort}/`, [`127.0.0.1:${closedPort}`]);
    assert.deepEqual(refused, { ok: false, error: "Connection failed: ECONNREFUSED" });
  });

  it("connects to the address checked for each attempt, not where an earlier attempt's connection went", async () => {
    const allowed = [`pinned.example:${port}`];
    const at = (address: string) =>
      attempt(`http://pinned.example:${port}/hook`, allowed, { "pinned.example": address });
    assert.equal((await at("127.0.0.1")).ok, true);
    // The name now resolves to an address nothing listens on (the server is bound to 127.0.0.1):
    // the attempt goes there, though a kept-alive connection to the first address is open.
    assert.deepEqual(await at("127.0.0.2"), { ok: false, error: "Connection failed: ECONNREFUSED" });
    assert.equal((await at("127.0.0.1")).ok, true);
  });
});

describe("attempt deadlines", () => {
  it("end an attempt once its time has passed, with a TimeoutError, and never one that settled first", async () => {
    const ended: { name: string; after: number }[] = [];
    const started = Date.now();
    const lateOne = new Promise<void>((resolve) =>
      watchDeadline(100, (reason) => {
        ended.push({ name: reason.name, after: Date.now() - started });
        resolve();
      }),
    );
    // Due before the late one: the sweep that ends the late one would have ended it too.
    const settled = watchDeadline(50, () => ended.push({ name: "settled one", after: Date.now() - started }));
    settled();
    assert.equal(watchedDeadlines(), 1, "a settled attempt's deadline is no longer watched");
    await lateOne;
    assert.equal(ended.length, 1);
    assert.equal(ended[0].name, "TimeoutError");
    assert.ok(ended[0].after >= 100, `ended after ${ended[0].after} ms`);
    assert.equal(watchedDeadlines(), 0, "nothing is left watched");
  });
});
