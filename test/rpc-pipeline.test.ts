import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import {
  bind,
  createLogger,
  loadTlsIdentity,
  type RpcServer,
  rpcClient,
  serveRpc,
  type Transport,
} from "@hb/platform";
import { certFiles, ensureDevCerts } from "../scripts/dev-certs.ts";

// Every served call passes one pipeline (packages/platform/src/rpc.ts): allow-list, then the
// request's declared rules, then the handler. Streams used to skip the rules; here a stream is
// served on both transports and asked with a request that breaks them.

const ID = "0195e3a4-5c6d-7e7f-8a9b-0c1d2e3f4a5b";

async function codeOf(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
    return "ok";
  } catch (err) {
    return Code[ConnectError.from(err).code];
  }
}

describe("the rpc pipeline serves unary and stream calls alike, on both transports", () => {
  let dir = "";
  let certs = "";
  const servers: RpcServer[] = [];
  const ports = new Map<Transport, number>();
  let handled = 0;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "hb-rpc-"));
    certs = await ensureDevCerts(path.join(dir, "certs"));
    const log = createLogger("rpc-test", "error");
    const impl = bind(WebhooksService, {
      async *streamEvents() {
        handled++;
        yield { item: { case: "opened", value: { openStreams: 1 } } };
      },
      setWebhookUrl: () => {
        handled++;
        return { url: "" };
      },
    });
    for (const transport of ["grpc-js", "connect"] as const) {
      const server = await serveRpc(transport, 0, [impl], log, loadTlsIdentity(certFiles(certs, "webhooks")));
      servers.push(server);
      ports.set(transport, server.port);
    }
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.close(0)));
    rmSync(dir, { recursive: true, force: true });
  });

  const client = (transport: Transport, as: string) =>
    rpcClient(transport, WebhooksService, `127.0.0.1:${ports.get(transport)}`, {
      timeoutMs: 5000,
      tls: loadTlsIdentity(certFiles(certs, as)),
    });
  const drain = async (stream: AsyncIterable<unknown>) => {
    const got: unknown[] = [];
    for await (const m of stream) got.push(m);
    return got;
  };

  for (const transport of ["grpc-js", "connect"] as const) {
    it(`${transport}: a stream request that breaks its declared rules is refused before the handler`, async () => {
      const c = client(transport, "gateway");
      try {
        const before = handled;
        assert.equal(
          await codeOf(() => drain(c.client.streamEvents({ partnerId: "not-an-id" }))),
          "InvalidArgument",
        );
        assert.equal(handled, before, "the handler never ran");
        assert.equal((await drain(c.client.streamEvents({ partnerId: ID }))).length, 1);
        assert.equal(handled, before + 1);
      } finally {
        c.close();
      }
    });

    it(`${transport}: a caller the allow-list does not name is refused a stream and a unary call`, async () => {
      const c = client(transport, "billing");
      try {
        const before = handled;
        assert.equal(await codeOf(() => drain(c.client.streamEvents({ partnerId: ID }))), "PermissionDenied");
        assert.equal(
          await codeOf(() => c.client.setWebhookUrl({ partnerId: ID, url: "" })),
          "PermissionDenied",
        );
        assert.equal(handled, before);
      } finally {
        c.close();
      }
    });
  }
});
