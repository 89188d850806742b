import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, it } from "node:test";
import { eventually } from "./eventually.ts";
import { type PgWireProxy, pgWireProxy } from "./pg-wire-proxy.ts";

// A stand-in server: it answers "A" on connect and "B" when the client writes; the proxy does
// not need PostgreSQL's protocol to pass bytes on.
describe("the PostgreSQL wire proxy's answer delay", () => {
  let server: net.Server;
  let proxy: PgWireProxy;
  const sockets = new Set<net.Socket>();

  before(async () => {
    server = net.createServer((socket) => {
      sockets.add(socket);
      socket.write("A");
      socket.on("data", () => socket.write("B"));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    proxy = await pgWireProxy({ host: "127.0.0.1", port: (server.address() as net.AddressInfo).port });
  });
  after(async () => {
    await proxy.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it("passes answers on in the order they came when the delay drops to 0 while one is held", async () => {
    // Held for as long as the test could take: only dropping the delay lets it out.
    proxy.answerDelayMs = 600_000;
    const client = net.connect(proxy.port, "127.0.0.1");
    let received = "";
    client.on("data", (d: Buffer) => {
      received += d.toString();
    });
    try {
      await eventually(async () => proxy.heldAnswers === 1, 10_000);
      proxy.answerDelayMs = 0;
      client.write("\0\0\0\x08\0\0\0\0");
      await eventually(async () => received.length === 2, 10_000);
      assert.equal(received, "AB");
      assert.equal(proxy.heldAnswers, 0);
    } finally {
      client.destroy();
    }
  });
});
