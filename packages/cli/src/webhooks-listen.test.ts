/**
 * webhooksListen against a stand-in for the platform's event stream and a local receiver (the
 * whole path against the real platform is test/webhooks-listen.test.ts).
 */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { resellerSignatureMatches, signWebhookBody, verifyWebhook } from "@hb/webhook-signature";
import { eventually } from "../../../test/support/eventually.ts";
import { webhooksListen } from "./webhooks-listen.ts";

const secret = "whsec_listen_test";
const key = "hbk_test";

const listen = async (server: http.Server) => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

function delivery(id: string, event = "order.paid") {
  const timestamp = new Date().toISOString();
  const body = JSON.stringify({ event, timestamp, data: { orderId: id } });
  return {
    id,
    event,
    body,
    headers: {
      "Content-Type": "application/json",
      "User-Agent": "Service-Reseller-Webhook/1.0",
      "X-Webhook-Id": id,
      "X-Webhook-Event": event,
      "X-Webhook-Timestamp": timestamp,
      "X-Webhook-Signature": signWebhookBody(body, secret),
    },
  };
}

/**
 * The platform's side: each connection is answered by the next script entry (an HTTP refusal, or
 * SSE deliveries after which the stream ends); every request must be a signed reseller request.
 */
function platform(script: ({ status: number } | { deliveries: ReturnType<typeof delivery>[] })[]) {
  const requests: { signedOk: boolean; at: number }[] = [];
  const server = http.createServer((req, res) => {
    const ts = String(req.headers["x-reseller-timestamp"] ?? "");
    requests.push({
      signedOk:
        req.headers.authorization === `Bearer ${key}` &&
        resellerSignatureMatches("", secret, ts, String(req.headers["x-reseller-signature"] ?? "")),
      at: Date.now(),
    });
    const step = script[requests.length - 1] ?? { deliveries: [] };
    if ("status" in step) {
      res.writeHead(step.status, { "content-type": "application/json" });
      return void res.end(JSON.stringify({ success: false, code: "UNAUTHORIZED", error: "Invalid key" }));
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(
      'event: ready\ndata: {"partnerId":"p","openStreams":1,"heartbeatSeconds":1}\n\n: heartbeat\n\n',
    );
    for (const d of step.deliveries)
      res.write(`id: ${d.id}\nevent: delivery\ndata: ${JSON.stringify(d)}\n\n`);
    // Keep the last connection open, as the platform does; earlier ones end (a restart, say).
    if (requests.length < script.length) res.end();
  });
  return { server, requests };
}

function receiver() {
  const got: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
      res.writeHead(got.length === 1 ? 200 : 503).end();
    });
  });
  return { server, got };
}

const until = (ok: () => boolean, ms = 10_000) => eventually(async () => ok(), ms, 20);

describe("webhooksListen", () => {
  it("forwards each event with its exact body and signed headers, logs the receiver's status, and reconnects after the stream ends", async () => {
    const first = delivery("0195e3a4-0000-7000-8000-000000000001");
    const second = delivery("0195e3a4-0000-7000-8000-000000000002", "service.provisioned");
    const p = platform([{ deliveries: [first] }, { deliveries: [second] }]);
    const rx = receiver();
    const stop = new AbortController();
    const lines: string[] = [];
    let reconnectLoggedAt = 0;
    const run = webhooksListen({
      apiUrl: `${await listen(p.server)}/api/v1/`,
      apiKey: key,
      signingSecret: secret,
      forwardTo: `${await listen(rx.server)}/hook`,
      signal: stop.signal,
      log: (l) => {
        lines.push(l);
        if (l.startsWith("Reconnecting in 1 s")) reconnectLoggedAt ||= Date.now();
      },
    });
    try {
      await until(() => rx.got.length === 2);
      assert.deepEqual(
        p.requests.map((r) => r.signedOk),
        [true, true],
        "every connection is a signed reseller request",
      );
      assert.ok(reconnectLoggedAt > 0, lines.join("\n"));
      assert.ok(p.requests[1].at - reconnectLoggedAt >= 900, "waits before reconnecting");
      for (const [i, d] of [first, second].entries()) {
        assert.equal(rx.got[i].body, d.body, "byte for byte");
        const v = verifyWebhook({ body: rx.got[i].body, headers: rx.got[i].headers, secret });
        assert.deepEqual([v.id, v.event], [d.id, d.event]);
        assert.equal(rx.got[i].headers["user-agent"], "Service-Reseller-Webhook/1.0");
      }
      await until(() => lines.filter((l) => l.includes(" -> POST ")).length === 2);
      const forwarded = lines.filter((l) => l.includes(" -> POST "));
      assert.match(forwarded[0], new RegExp(`order\\.paid ${first.id} -> POST .*/hook \\[200\\]$`));
      assert.match(forwarded[1], new RegExp(`service\\.provisioned ${second.id} -> POST .*/hook \\[503\\]$`));
      assert.ok(lines.some((l) => l.startsWith("Ready: forwarding webhook events to")));
    } finally {
      stop.abort();
      await run;
      p.server.close();
      rx.server.close();
    }
  });

  it("gives up at once on a refusal that reconnecting cannot cure, naming it", async () => {
    const p = platform([{ status: 401 }]);
    await assert.rejects(
      webhooksListen({
        apiUrl: `${await listen(p.server)}/api/v1`,
        apiKey: key,
        signingSecret: secret,
        forwardTo: "http://127.0.0.1:9/hook",
        log: () => {},
      }),
      /HTTP 401 UNAUTHORIZED: Invalid key/,
    );
    assert.equal(p.requests.length, 1);
    p.server.close();
  });

  it("logs a receiver that cannot be reached and keeps listening", async () => {
    const d = delivery("0195e3a4-0000-7000-8000-000000000003");
    const p = platform([{ deliveries: [d] }]);
    const gone = http.createServer();
    const nobody = `${await listen(gone)}/hook`;
    await new Promise((r) => gone.close(r));
    const stop = new AbortController();
    const lines: string[] = [];
    const run = webhooksListen({
      apiUrl: `${await listen(p.server)}/api/v1`,
      apiKey: key,
      signingSecret: secret,
      forwardTo: nobody,
      signal: stop.signal,
      log: (l) => lines.push(l),
    });
    try {
      await until(() => lines.some((l) => l.includes(d.id)));
      assert.match(lines.find((l) => l.includes(d.id))!, /\[failed: ECONNREFUSED\]$/);
      assert.equal(p.requests.length, 1, "the stream stayed open");
    } finally {
      stop.abort();
      await run;
      p.server.close();
    }
  });
});
