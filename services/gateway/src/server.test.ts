import assert from "node:assert/strict";
import type http from "node:http";
import net from "node:net";
import { after, before, describe, it } from "node:test";
import { eventually } from "../../../test/support/eventually.ts";
import { rawExchange } from "../../../test/support/raw-exchange.ts";
import { createGatewayServer } from "./server.ts";

describe("the gateway's HTTP server limits", () => {
  let server: http.Server;
  let port = 0;
  before(async () => {
    server = createGatewayServer(
      (req, res) => {
        req.resume();
        req.on("end", () => res.end("ok"));
      },
      { headersTimeoutMs: 300, requestTimeoutMs: 600, keepAliveTimeoutMs: 5000, maxConnections: 3 },
    );
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as net.AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it("answers 408 and closes a connection whose headers do not arrive in time", async () => {
    const started = Date.now();
    const r = await rawExchange("127.0.0.1", port, ["GET / HTTP/1.1\r\nHost: x\r\n"]);
    assert.ok(r.closed, "closed");
    assert.match(r.text, /^HTTP\/1\.1 408/);
    assert.ok(Date.now() - started < 2000, `closed after ${Date.now() - started} ms`);
  });

  it("answers 408 and closes a connection whose body does not arrive in time", async () => {
    const started = Date.now();
    const r = await rawExchange("127.0.0.1", port, [
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{",
    ]);
    assert.ok(r.closed, "closed");
    assert.match(r.text, /^HTTP\/1\.1 408/);
    assert.ok(Date.now() - started < 3000, `closed after ${Date.now() - started} ms`);
  });

  it("keeps an idle keep-alive connection past the header deadline and serves its next request", async () => {
    const socket = net.connect(port, "127.0.0.1");
    await new Promise((r) => socket.once("connect", r));
    let text = "";
    socket.on("data", (d) => {
      text += d.toString();
    });
    socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await eventually(async () => text.endsWith("ok"), 2000, 10);
    const idleSince = Date.now();
    // Idle for twice the header deadline, observed on the clock, then a second request.
    await eventually(async () => Date.now() - idleSince > 600, 2000, 50);
    text = "";
    socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await eventually(async () => text.endsWith("ok"), 2000, 10);
    assert.match(text, /^HTTP\/1\.1 200/);
    socket.destroy();
  });

  it("closes connections beyond the cap at once and serves again once one is gone", async () => {
    const held = await Promise.all(
      [0, 1, 2].map(async () => {
        const s = net.connect(port, "127.0.0.1");
        await new Promise((r) => s.once("connect", r));
        return s;
      }),
    );
    await eventually(
      async () => (await new Promise<number>((r) => server.getConnections((_e, n) => r(n)))) === 3,
      2000,
      10,
    );
    const refused = await rawExchange("127.0.0.1", port, ["GET / HTTP/1.1\r\nHost: x\r\n\r\n"], 2000);
    assert.ok(refused.closed, "the fourth connection is closed");
    assert.equal(refused.text, "", "without an answer");
    held[0].destroy();
    await eventually(
      async () => (await new Promise<number>((r) => server.getConnections((_e, n) => r(n)))) < 3,
      2000,
      10,
    );
    const served = await rawExchange(
      "127.0.0.1",
      port,
      ["GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"],
      2000,
    );
    assert.match(served.text, /^HTTP\/1\.1 200/);
    for (const s of held) s.destroy();
  });

  // The cause of the 408 on the event stream and of "fetch failed: other side closed" on the
  // shared gateway under load (a load average near 40 on two cores): Node counts the header
  // deadline from when it accepted the connection, not from when the request arrived, so a
  // request that arrived complete but that a starved process reads after the deadline is refused
  // and the connection closed, with the request still unread (the client may see a reset, not the
  // 408). A busy loop on accepting stands in for the starved process. Not fixed yet: Node's own
  // deadline cannot be told when the bytes came, so it needs a deadline of the gateway's own.
  it.todo("answers a complete request that arrived in time, even when the server reads it late", async () => {
    const slow = createGatewayServer(
      (req, res) => {
        req.resume();
        req.on("end", () => res.end("ok"));
      },
      { headersTimeoutMs: 300, requestTimeoutMs: 600, keepAliveTimeoutMs: 5000, maxConnections: 3 },
    );
    slow.on("connection", () => {
      const until = Date.now() + 1000;
      while (Date.now() < until);
    });
    await new Promise<void>((r) => slow.listen(0, "127.0.0.1", r));
    try {
      const r = await rawExchange("127.0.0.1", (slow.address() as net.AddressInfo).port, [
        "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      ]);
      assert.match(r.text, /^HTTP\/1\.1 200/);
    } finally {
      slow.closeAllConnections();
      await new Promise((r) => slow.close(r));
    }
  });
});
