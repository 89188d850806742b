import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { BillingService, type PayDocumentResponse } from "@hb/contracts/hb/billing/v1/billing_pb";
import { DocumentKind } from "@hb/contracts/hb/billing/v1/documents_pb";
import { ErrorInfoSchema } from "@hb/contracts/hb/platform/v1/error_pb";
import fc from "fast-check";
import { certFiles, ensureDevCerts } from "../../../scripts/dev-certs.ts";
import { apiError } from "./errors.ts";
import { createLogger } from "./log.ts";
import { currentContext, runInContext } from "./request-context.ts";
import { bind, type RpcServer, serveRpc, type Transport } from "./rpc.ts";
import { rpcClient } from "./rpc-client.ts";
import { coalesce } from "./rpc-coalesce.ts";
import { loadTlsIdentity } from "./service-identity.ts";
import { beginContext, SpanKind } from "./tracing.ts";

/** A document id whose last digit says how the handler answers it: 0-6 paid, 7-9 refused. */
const idOf = (n: number) => `0195e3a4-5c6d-7e7f-8a9b-${String(n).padStart(12, "0")}`;
const refused = (id: string) => Number(id.slice(-1)) >= 7;

describe("coalesced calls: PayDocument calls made together go to billing as one PayDocuments call", () => {
  let dir = "";
  let certs = "";
  const servers: RpcServer[] = [];
  const ports = new Map<Transport, number>();
  /** The request id each served call's context carried, by document id. */
  const seenRequestIds = new Map<string, string>();
  const log = createLogger("coalesce-test", "error");

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "hb-coalesce-"));
    certs = await ensureDevCerts(path.join(dir, "certs"));
    const binding = bind(
      BillingService,
      {
        payDocument: (req) => {
          seenRequestIds.set(req.documentId, currentContext()?.requestId ?? "");
          if (refused(req.documentId))
            throw apiError("CONFLICT", `Invoice ${req.documentId} is already paid`);
          return { fullyPaid: true, creditApplied: { currency: "EUR", amount: req.documentId.slice(-4) } };
        },
      },
      { payDocuments: "payDocument" },
    );
    for (const transport of ["grpc-js", "connect"] as const) {
      const server = await serveRpc(
        transport,
        0,
        [binding],
        log,
        loadTlsIdentity(certFiles(certs, "billing")),
      );
      servers.push(server);
      ports.set(transport, server.port);
    }
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.close(0)));
    rmSync(dir, { recursive: true, force: true });
  });

  const clientOf = (transport: Transport, port = ports.get(transport)) =>
    rpcClient(transport, BillingService, `127.0.0.1:${port}`, {
      timeoutMs: 5000,
      tls: loadTlsIdentity(certFiles(certs, "gateway")),
    });

  /** The coalescing client, counting the PayDocuments calls it makes and their sizes. */
  function coalescing(transport: Transport, maxCalls: number, port?: number) {
    const handle = clientOf(transport, port);
    const sent: number[] = [];
    const pay = coalesce<Parameters<typeof handle.client.payDocument>[0], PayDocumentResponse>(
      (req) => {
        sent.push(req.calls.length);
        return handle.client.payDocuments(req);
      },
      { method: "/hb.billing.v1.BillingService/PayDocument", maxCalls },
    );
    return { pay, sent, unary: handle.client, close: handle.close };
  }

  interface Outcome {
    ok?: string;
    code?: string;
    message?: string;
    info?: string;
  }
  const outcome = (p: Promise<PayDocumentResponse>): Promise<Outcome> =>
    p.then(
      (r) => ({ ok: r.creditApplied?.amount }),
      (err: unknown) => {
        const ce = ConnectError.from(err);
        return {
          code: Code[ce.code],
          message: ce.rawMessage,
          info: ce.findDetails(ErrorInfoSchema)[0]?.code,
        };
      },
    );

  for (const transport of ["grpc-js", "connect"] as const) {
    it(`${transport}: each call gets its own answer or refusal, as its unary call would, in as few calls as maxCalls allows`, async () => {
      const c = coalescing(transport, 8);
      try {
        await fc.assert(
          fc.asyncProperty(
            // Document numbers (last digit: paid or refused) and a few malformed ids, fired at once.
            fc.array(fc.oneof(fc.nat({ max: 9999 }).map(idOf), fc.constant("not-a-uuid")), {
              minLength: 1,
              maxLength: 30,
            }),
            async (ids) => {
              c.sent.length = 0;
              const requests = ids.map((documentId) => ({ kind: DocumentKind.INVOICE, documentId }));
              const together = await Promise.all(requests.map((r) => outcome(c.pay(r))));
              const alone = await Promise.all(requests.map((r) => outcome(c.unary.payDocument(r))));
              assert.deepEqual(together, alone);
              for (const [i, id] of ids.entries()) {
                if (id === "not-a-uuid") assert.equal(together[i].info, "BAD_REQUEST");
                else if (refused(id)) assert.equal(together[i].info, "CONFLICT");
                else assert.equal(together[i].ok, id.slice(-4));
              }
              assert.deepEqual(
                c.sent,
                Array.from({ length: Math.ceil(ids.length / 8) }, (_, i) => Math.min(8, ids.length - 8 * i)),
              );
            },
          ),
          { numRuns: 25 },
        );
      } finally {
        c.close();
      }
    });
  }

  it("calls made in separate turns of the event loop go separately", async () => {
    const c = coalescing("grpc-js", 64);
    try {
      const first = c.pay({ kind: DocumentKind.INVOICE, documentId: idOf(1) });
      await new Promise((r) => setImmediate(r));
      const second = c.pay({ kind: DocumentKind.INVOICE, documentId: idOf(2) });
      await Promise.all([first, second]);
      assert.deepEqual(c.sent, [1, 1]);
    } finally {
      c.close();
    }
  });

  it("each call is served in a context of its own, with its caller's request id", async () => {
    const c = coalescing("grpc-js", 64);
    try {
      const ids = [idOf(11), idOf(12), idOf(13)];
      await Promise.all(
        ids.map((documentId, i) =>
          runInContext(beginContext("test", SpanKind.SERVER, { requestId: `req-coalesced-${i}` }), () =>
            c.pay({ kind: DocumentKind.INVOICE, documentId }),
          ),
        ),
      );
      assert.deepEqual(c.sent, [3]);
      assert.deepEqual(
        ids.map((id) => seenRequestIds.get(id)),
        ["req-coalesced-0", "req-coalesced-1", "req-coalesced-2"],
      );
    } finally {
      c.close();
    }
  });

  it("a failure of the whole call is each call's failure", async () => {
    const gone = await serveRpc("grpc-js", 0, [], log, loadTlsIdentity(certFiles(certs, "billing")));
    await gone.close(0);
    const c = coalescing("grpc-js", 64, gone.port);
    try {
      const got = await Promise.all(
        [idOf(1), idOf(2)].map((documentId) => outcome(c.pay({ kind: 1, documentId }))),
      );
      assert.deepEqual(
        got.map((g) => g.code),
        ["Unavailable", "Unavailable"],
      );
    } finally {
      c.close();
    }
  });

  it("a server without the companion (older than the client) is sent each call as a unary call, in its caller's context", async () => {
    const older = await serveRpc(
      "grpc-js",
      0,
      [
        bind(BillingService, {
          payDocument: (req) => {
            seenRequestIds.set(req.documentId, currentContext()?.requestId ?? "");
            return { fullyPaid: true, creditApplied: { currency: "EUR", amount: req.documentId.slice(-4) } };
          },
        }),
      ],
      log,
      loadTlsIdentity(certFiles(certs, "billing")),
    );
    const handle = clientOf("grpc-js", older.port);
    const method = "/hb.billing.v1.BillingService/PayDocument";
    type Req = Parameters<typeof handle.client.payDocument>[0];
    const withFallback = coalesce<Req, PayDocumentResponse>(
      handle.client.payDocuments,
      { method, maxCalls: 64 },
      handle.client.payDocument,
    );
    const without = coalesce<Req, PayDocumentResponse>(handle.client.payDocuments, { method, maxCalls: 64 });
    try {
      const ids = [idOf(21), idOf(22)];
      const got = await Promise.all(
        ids.map((documentId, i) =>
          runInContext(beginContext("test", SpanKind.SERVER, { requestId: `req-older-${i}` }), () =>
            outcome(withFallback({ kind: DocumentKind.INVOICE, documentId })),
          ),
        ),
      );
      assert.deepEqual(got, [{ ok: "0021" }, { ok: "0022" }]);
      assert.deepEqual(
        ids.map((id) => seenRequestIds.get(id)),
        ["req-older-0", "req-older-1"],
      );
      const refused = await outcome(without({ kind: DocumentKind.INVOICE, documentId: idOf(23) }));
      assert.equal(refused.code, "Unimplemented");
    } finally {
      handle.close();
      await older.close(0);
    }
  });

  it("a server refuses to start with a companion whose messages do not carry the method's calls", async () => {
    const wrong = bind(BillingService, { payDocument: () => ({}) }, { getDocument: "payDocument" });
    await assert.rejects(
      serveRpc("grpc-js", 0, [wrong], log, loadTlsIdentity(certFiles(certs, "billing"))),
      /GetDocument's request must have calls/,
    );
  });
});
