/**
 * Local webhook development: GET /reseller/webhooks/stream and `hb webhooks listen`
 * (webhooksListen) forwarding a partner's events, signed as delivered, to a receiver on this
 * machine, while the endpoint on file keeps getting its deliveries.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, it } from "node:test";
import { DeliveryStatus, WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { WebhooksStaffService } from "@hb/contracts/hb/webhooks/v1/webhooks_staff_pb";
import { signResellerRequest, type VerifiedWebhook, verifyWebhook } from "@hb/webhook-signature";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { webhooksListen } from "../packages/cli/src/webhooks-listen.ts";
import { contractViolation } from "./contract.ts";
import {
  addCredit,
  api,
  auth,
  eventually,
  GATEWAY,
  grpc,
  newPartner,
  newProduct,
  type Partner,
  signed,
} from "./helpers.ts";
import { publishServiceEvent } from "./support/service-events.ts";

const webhooks = grpc([WebhooksService, WebhooksStaffService], "WEBHOOKS_ADDR");
const STREAM = "/api/v1/reseller/webhooks/stream";

/** A receiver that verifies every delivery with @hb/webhook-signature, as a partner's would. */
function verifyingReceiver(secret: () => string) {
  const verified: VerifiedWebhook[] = [];
  const refused: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      try {
        verified.push(verifyWebhook({ body: Buffer.concat(chunks), headers: req.headers, secret: secret() }));
        res.writeHead(200).end();
      } catch (err) {
        refused.push((err as { code?: string }).code ?? String(err));
        res.writeHead(400).end();
      }
    });
  });
  const listening = new Promise<string>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
  return { verified, refused, server, listening };
}

/** Opens the stream by hand and collects its raw text. */
async function openStream(p: Partner) {
  const stop = new AbortController();
  const res = await fetch(GATEWAY + STREAM, {
    headers: { authorization: `Bearer ${p.key}`, ...signResellerRequest({ secret: p.secret }) },
    signal: stop.signal,
  });
  let text = "";
  const reading = (async () => {
    try {
      for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) text += chunk;
    } catch {
      // aborted
    }
  })();
  return {
    res,
    text: () => text,
    /** Settles when the answer has been read to its end (a refusal) or the stream was closed. */
    done: reading,
    close: async () => {
      stop.abort();
      await reading;
    },
  };
}

/** Publishes a partner's service event the way billing does. */
async function raiseServiceEvent(partnerId: string) {
  const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
  try {
    return await publishServiceEvent(jetstream(nc), process.env.HB_NS ?? "", partnerId);
  } finally {
    await nc.close();
  }
}

describe("hb webhooks listen", () => {
  const local = verifyingReceiver(() => partner.secret);
  const endpoint = verifyingReceiver(() => partner.secret);
  let partner: Partner;
  after(() => {
    local.server.close();
    endpoint.server.close();
  });

  it("forwards the partner's events, verified as real deliveries, while the endpoint on file gets them too", async () => {
    partner = await newPartner();
    await addCredit({ ...partner, keyId: "" }, "100");
    const endpointAddr = await endpoint.listening;
    await webhooks.updateProgrammeSettings({ addAllowedDestinations: [endpointAddr] });
    const saved = await signed(partner, "PUT", "/api/v1/reseller/account/webhook", {
      webhookUrl: `http://${endpointAddr}/hook`,
    });
    assert.equal(saved.status, 200, saved.text);

    const lines: string[] = [];
    const stop = new AbortController();
    const listening = webhooksListen({
      apiUrl: `${GATEWAY}/api/v1`,
      apiKey: partner.key,
      signingSecret: partner.secret,
      // The forwarder needs no allowed destination: it runs on the partner's machine.
      forwardTo: `http://${await local.listening}/hook`,
      signal: stop.signal,
      log: (l) => lines.push(l),
    });
    try {
      await eventually(async () => lines.some((l) => l.startsWith("Ready:")));
      const product = await newProduct();
      const placed = await signed(partner, "POST", "/api/v1/reseller/orders", {
        externalOrderId: `listen-${Date.now()}`,
        externalCustomerId: "cust-7",
        paymentMode: "credit",
        items: [
          {
            productId: product.id,
            billingCycle: "monthly",
            hostname: "listen-1",
            configOptions: { os_image_id: "debian-12" },
          },
        ],
      });
      assert.equal(placed.status, 201, placed.text);
      const orderId = placed.body.data.id as string;

      const paid = await eventually(
        async () => local.verified.find((v) => v.event === "order.paid" && v.data.orderId === orderId),
        20_000,
      );
      assert.equal(paid.data.externalCustomerId, "cust-7");
      // The receiver sees an event before the forwarder has its answer and logs the line: wait for each.
      await eventually(async () =>
        local.verified.some((v) => v.event === "service.provisioned" && v.data.orderId === orderId),
      );
      assert.deepEqual(local.refused, [], "every forwarded event verifies");
      await eventually(
        async () => lines.some((l) => l.includes(`order.paid ${paid.id} -> POST`) && l.endsWith("[200]")),
        10_000,
      ).catch(() => assert.fail(lines.join("\n")));

      // The endpoint on file gets the same events, under the same X-Webhook-Id.
      const delivered = await eventually(
        async () => endpoint.verified.find((v) => v.event === "order.paid" && v.data.orderId === orderId),
        20_000,
      );
      assert.equal(delivered.id, paid.id);
      assert.deepEqual(endpoint.refused, []);
      await eventually(async () =>
        (await webhooks.listDeliveries({ partnerId: partner.customerId, limit: 20 })).deliveries.some(
          (d) => d.id === paid.id && d.status === DeliveryStatus.DELIVERED,
        ),
      );
    } finally {
      stop.abort();
      await listening;
    }
  });
});

describe("the hb command", () => {
  it("hb webhooks listen --forward-to relays a partner's event to a local receiver, verified", async () => {
    const p = await newPartner();
    const local = verifyingReceiver(() => p.secret);
    const target = `http://${await local.listening}/hook`;
    // The built CLI, as `npx hb` runs it (npm install's prepare builds packages/cli/dist).
    const child = spawn(
      process.execPath,
      ["packages/cli/bin/hb.js", "webhooks", "listen", "--forward-to", target],
      {
        env: { ...process.env, HB_API_URL: GATEWAY, HB_API_KEY: p.key, HB_WEBHOOK_SECRET: p.secret },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    try {
      await eventually(async () => output.includes("Ready:"), 30_000);
      const id = await raiseServiceEvent(p.customerId);
      const got = await eventually(async () => local.verified.find((v) => v.id === id), 20_000);
      assert.equal(got.event, "service.suspended");
      assert.deepEqual(local.refused, []);
      await eventually(async () => output.includes(`service.suspended ${id}`), 10_000);
      assert.doesNotMatch(output, new RegExp(p.secret), "the secret is never printed");
    } finally {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGINT");
      await exited;
      local.server.close();
    }
  });
});

describe("GET /reseller/webhooks/stream", () => {
  it("answers server-sent events: ready, heartbeats, and each event signed with the secret of the moment", async () => {
    const p = await newPartner(); // no URL on file: the stream does not need one
    const s = await openStream(p);
    try {
      assert.equal(s.res.status, 200);
      assert.equal(s.res.headers.get("content-type"), "text/event-stream; charset=utf-8");
      assert.equal(s.res.headers.get("cache-control"), "no-cache, no-transform");
      await eventually(async () => s.text().includes("event: ready\n"));
      const ready = JSON.parse(/event: ready\ndata: (.*)\n/.exec(s.text())![1]);
      assert.deepEqual(ready, { partnerId: p.customerId, openStreams: 1, heartbeatSeconds: 1 });
      await eventually(async () => s.text().includes("\n: heartbeat\n\n"));

      const before = await raiseServiceEvent(p.customerId);
      const { signingSecret } = await auth.rotatePartnerSecret({ customerId: p.customerId });
      const afterRotation = await raiseServiceEvent(p.customerId);
      const deliveries = await eventually(async () => {
        const found = [...s.text().matchAll(/id: (.*)\nevent: delivery\ndata: (.*)\n\n/g)].map((m) => ({
          sseId: m[1],
          ...(JSON.parse(m[2]) as {
            id: string;
            event: string;
            headers: Record<string, string>;
            body: string;
          }),
        }));
        return found.length >= 2 ? found : undefined;
      });
      assert.deepEqual(
        deliveries.map((d) => [d.sseId, d.id]),
        [
          [before, before],
          [afterRotation, afterRotation],
        ],
      );
      const last = deliveries[1];
      assert.equal(last.headers["User-Agent"], "Service-Reseller-Webhook/1.0");
      assert.equal(last.headers["Content-Type"], "application/json");
      const v = verifyWebhook({ body: last.body, headers: last.headers, secret: signingSecret });
      assert.deepEqual([v.event, v.data.status], ["service.suspended", "suspended"]);
      assert.throws(() => verifyWebhook({ body: last.body, headers: last.headers, secret: p.secret }), {
        code: "bad_signature",
      });
      assert.ok(!s.text().includes(p.secret) && !s.text().includes(signingSecret), "no secret on the wire");
    } finally {
      await s.close();
    }
  });

  it("is a signed reseller request like the others", async () => {
    const p = await newPartner();
    const unsigned = await api("GET", STREAM, { key: p.key });
    assert.deepEqual([unsigned.status, unsigned.body.code], [401, "UNAUTHORIZED"]);
    const stale = await signed(p, "GET", STREAM, undefined, { secret: "whsec_not_it" });
    assert.deepEqual([stale.status, stale.body.code], [401, "UNAUTHORIZED"]);
  });

  it("holds at most 5 open streams per partner, and a closed one frees its place", async () => {
    const p = await newPartner();
    const open = [];
    try {
      for (let i = 0; i < 5; i++) {
        const s = await openStream(p);
        assert.equal(s.res.status, 200);
        open.push(s);
      }
      // Opened like the others, so a sixth stream that is let in fails here instead of hanging.
      const sixth = await openStream(p);
      if (sixth.res.status === 200) await sixth.close();
      await sixth.done;
      const refusal = JSON.parse(sixth.text());
      assert.deepEqual([sixth.res.status, refusal.code], [409, "CONFLICT"], sixth.text());
      assert.match(refusal.error, /At most 5 event streams/);
      const violation = await contractViolation(GATEWAY, "GET", STREAM, 409, refusal);
      assert.equal(violation, undefined, violation);
      // Another partner is not affected.
      const other = await openStream(await newPartner());
      assert.equal(other.res.status, 200);
      await other.close();

      await open.shift()!.close();
      const again = await eventually(async () => {
        const s = await openStream(p);
        if (s.res.status === 200) return s;
        await s.close();
        return undefined;
      });
      open.push(again);
    } finally {
      await Promise.all(open.map((s) => s.close()));
    }
  });
});
