import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate, timestampMs, timestampNow } from "@bufbuild/protobuf/wkt";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { EventSchema } from "@hb/contracts/hb/events/v1/events_pb";
import { DeliveryStatus, WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { WebhooksStaffService } from "@hb/contracts/hb/webhooks/v1/webhooks_staff_pb";
import { newId, streams } from "@hb/platform";
import { verifyWebhook } from "@hb/webhook-signature";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import {
  addCredit,
  api,
  auth,
  eventually,
  grpc,
  newAccount,
  newPartner,
  newProduct,
  type Partner,
  signed,
} from "./helpers.ts";
import { serviceSql } from "./support/service-db.ts";

const webhooks = grpc([WebhooksService, WebhooksStaffService], "WEBHOOKS_ADDR");
// Writes into webhooks' own tables only, as webhooks' role: states no RPC reaches (made due now,
// a URL saved before the rules changed).
const sql = serviceSql("webhooks");

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: { event: string; timestamp: string; data: Record<string, unknown> };
  at: number;
}

/** Lets webhook URLs name 127.0.0.1:<port> (exactly that host and port). */
const allowDestination = (port: number) =>
  webhooks.updateProgrammeSettings({ addAllowedDestinations: [`127.0.0.1:${port}`] });

/**
 * A real receiver on loopback, registered as an allowed destination before its URL is handed out;
 * `respond` decides each answer.
 */
function receiver() {
  const got: Received[] = [];
  let respond: (r: Received) => { status: number; headers?: Record<string, string>; hang?: boolean } =
    () => ({ status: 200 });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString();
      const r = { path: req.url ?? "", headers: req.headers, raw, body: JSON.parse(raw), at: Date.now() };
      got.push(r);
      const answer = respond(r);
      if (answer.hang) return;
      res.writeHead(answer.status, answer.headers).end("ok");
    });
  });
  return {
    got,
    server,
    set: (fn: typeof respond) => {
      respond = fn;
    },
    url: async () => {
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      const { port } = server.address() as { port: number };
      await allowDestination(port);
      return `http://127.0.0.1:${port}/hook`;
    },
  };
}

const deliveries = async (p: Partner) =>
  (await webhooks.listDeliveries({ partnerId: p.customerId, limit: 100 })).deliveries;

/**
 * Waits until one of the partner's deliveries is recorded as delivered. A receiver holds the
 * request before the webhooks service has its answer and records it, so seeing the request is not
 * yet seeing the record (under load the gap has been long enough for a read to find it pending).
 */
const sentOn = (p: Partner) =>
  eventually(async () => (await deliveries(p)).some((d) => d.status === DeliveryStatus.DELIVERED));

/** Waits until the delivery has had `attempts` attempts, and returns it. */
const afterAttempts = (p: Partner, id: string, attempts: number) =>
  eventually(async () => (await deliveries(p)).find((d) => d.id === id && d.attempts >= attempts));

/**
 * Publishes a partner's service event the way billing does, and waits until the webhooks service
 * has consumed it (its durable consumer's ack floor has passed it), so its outcome is final.
 */
async function raiseServiceEvent(partnerId: string, serviceId: string, occurredAt = timestampNow()) {
  const ns = process.env.HB_NS!;
  const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
  try {
    const event = create(EventSchema, {
      id: newId(),
      type: "service.suspended",
      occurredAt,
      partnerId,
      payload: { case: "service", value: { serviceId, status: ServiceStatus.SUSPENDED, hostname: "h" } },
    });
    const ack = await jetstream(nc).publish(`${ns}.events.service.suspended`, toBinary(EventSchema, event), {
      msgID: event.id,
    });
    const jsm = await jetstreamManager(nc);
    await eventually(
      async () =>
        (await jsm.consumers.info(streams(ns).events.name, "webhooks-deliveries")).ack_floor.stream_seq >=
        ack.seq,
    );
  } finally {
    await nc.close();
  }
}

describe("reseller request authentication", () => {
  it("needs a partner's key with the account scope and a valid signature", async () => {
    const p = await newPartner();
    assert.equal((await signed(p, "GET", "/api/v1/reseller/services")).status, 200);
    const unsigned = await api("GET", "/api/v1/reseller/services", { key: p.key });
    assert.deepEqual([unsigned.status, unsigned.body.code], [401, "UNAUTHORIZED"]);
    const wrong = await signed(p, "GET", "/api/v1/reseller/services", undefined, { secret: "whsec_wrong" });
    assert.deepEqual([wrong.status, wrong.body.code], [401, "UNAUTHORIZED"]);
    const old = String(Math.floor(Date.now() / 1000) - 3600);
    const replay = await signed(p, "GET", "/api/v1/reseller/services", undefined, { timestamp: old });
    assert.deepEqual([replay.status, replay.body.code], [401, "UNAUTHORIZED"], "no replay");
    const customer = await newAccount();
    const r = await api("GET", "/api/v1/reseller/services", { key: customer.key });
    assert.deepEqual([r.status, r.body.code], [403, "FORBIDDEN"]);
    await assert.rejects(
      auth.createKey({
        personId: customer.ownerId,
        label: "x",
        scopes: ["account"],
        ipAllowlist: "",
      }),
      /reseller partners/,
    );
  });

  it("refuses requests signed with the old secret at once after rotation", async () => {
    const p = await newPartner();
    const { signingSecret } = await auth.rotatePartnerSecret({ customerId: p.customerId });
    const stale = await signed(p, "GET", "/api/v1/reseller/services");
    assert.deepEqual([stale.status, stale.body.code], [401, "UNAUTHORIZED"]);
    assert.equal(
      (await signed({ ...p, secret: signingSecret }, "GET", "/api/v1/reseller/services")).status,
      200,
    );
  });
});

describe("webhook endpoint URL", () => {
  it("refuses non-http schemes, loopback, private and link-local hosts in any spelling, and clears with empty", async () => {
    const p = await newPartner();
    for (const webhookUrl of [
      "ftp://example.com/x",
      "example.com/hook",
      "http://10.0.0.5/hook",
      "http://169.254.169.254/latest/meta-data",
      "http://192.168.1.10/",
      "http://[fd00::1]/hook",
      "http://[::ffff:10.0.0.1]/",
      "http://0.0.0.0/",
      "https://user:pw@example.com/",
      "http://[::7f00:1]:8080/",
      "http://[::127.0.0.1]/",
      "http://[64:ff9b::a9fe:a9fe]/",
      "http://[2002:7f00:1::1]/",
      "http://localhost./",
      "http://LOCALHOST/",
      "http://foo.localhost/",
      "http://2130706433/",
      "http://0x7f.1/",
      "http://017700000001/",
    ]) {
      const r = await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl });
      assert.equal(r.status, 400, `${webhookUrl}: ${r.text}`);
      assert.equal(r.body.code, "BAD_REQUEST");
      assert.equal(r.body.details[0].field, "webhookUrl");
    }
    // The staff setter (admin command) goes through the same check.
    for (const url of ["http://[::7f00:1]:8080/", "http://localhost./", "http://127.0.0.1:8080/"]) {
      await assert.rejects(webhooks.setWebhookUrl({ partnerId: p.customerId, url }), /public/, url);
    }
    assert.equal((await webhooks.getWebhook({ partnerId: p.customerId })).url, "");
    const ok = await signed(p, "PUT", "/api/v1/reseller/account/webhook", {
      webhookUrl: "https://hooks.example.com/partner",
    });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(
      (await webhooks.getWebhook({ partnerId: p.customerId })).url,
      "https://hooks.example.com/partner",
    );
    await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl: "" });
    assert.equal((await webhooks.getWebhook({ partnerId: p.customerId })).url, "");
  });
});

describe("allowed destinations", () => {
  const rx = receiver();
  after(() => rx.server.close());

  it("let a URL name exactly an allowed host and port, when saved and at delivery", async () => {
    const url = await rx.url();
    const port = Number(new URL(url).port);
    const { settings } = await webhooks.getProgrammeSettings({});
    assert.ok(settings!.allowedDestinations.includes(`127.0.0.1:${port}`));
    const p = await newPartner();
    for (const webhookUrl of [
      `http://127.0.0.1:${port + 1}/`,
      `http://localhost:${port}/`,
      `http://[::1]:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://[::7f00:1]:${port}/`,
      `http://127.0.0.2:${port}/`,
    ]) {
      const r = await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl });
      assert.equal(r.status, 400, `${webhookUrl}: ${r.text}`);
    }
    const saved = await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl: url });
    assert.equal(saved.status, 200, saved.text);
    const q = await signed(p, "POST", "/api/v1/reseller/webhooks/test");
    await eventually(async () => rx.got.some((r) => r.headers["x-webhook-id"] === q.body.data.deliveryId));
  });

  it("block a saved URL at delivery once its entry is removed, and the attempt counts", async () => {
    const own = receiver();
    try {
      const url = await own.url();
      const port = Number(new URL(url).port);
      const p = await newPartner();
      assert.equal(
        (await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl: url })).status,
        200,
      );
      const { settings } = await webhooks.updateProgrammeSettings({
        removeAllowedDestinations: [`127.0.0.1:${port}`],
      });
      assert.ok(!settings!.allowedDestinations.includes(`127.0.0.1:${port}`));
      const q = await signed(p, "POST", "/api/v1/reseller/webhooks/test");
      const d = await afterAttempts(p, q.body.data.deliveryId, 1);
      assert.match(d.lastError, /blocked/);
      assert.equal(d.status, DeliveryStatus.PENDING);
      assert.ok(timestampMs(d.nextAttemptAt!) > Date.now() + 30_000, "rescheduled with back-off");
      assert.equal(own.got.length, 0);
    } finally {
      own.server.close();
    }
  });

  it("refuse an entry that is not host:port", async () => {
    for (const entry of ["127.0.0.1", "::1:80", "http://127.0.0.1:80", "127.0.0.1:70000"]) {
      await assert.rejects(
        webhooks.updateProgrammeSettings({ addAllowedDestinations: [entry] }),
        /is not host:port/,
        entry,
      );
    }
  });
});

describe("deliveries", () => {
  const rx = receiver();
  let url = "";
  before(async () => {
    url = await rx.url();
  });
  after(async () => {
    rx.server.close();
    await sql.end();
  });

  it("delivers webhook.test signed over the exact body with the spec's headers", async () => {
    const p = await newPartner();
    assert.equal(
      (await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl: url })).status,
      200,
    );
    const q = await signed(p, "POST", "/api/v1/reseller/webhooks/test");
    assert.equal(q.status, 200, q.text);
    const got = await eventually(async () =>
      rx.got.find((r) => r.headers["x-webhook-id"] === q.body.data.deliveryId),
    );
    assert.equal(got.headers["x-webhook-event"], "webhook.test");
    assert.equal(got.headers["user-agent"], "Service-Reseller-Webhook/1.0");
    assert.equal(got.headers["content-type"], "application/json");
    assert.equal(got.headers["x-webhook-timestamp"], got.body.timestamp);
    assert.equal(got.body.event, "webhook.test");
    const verified = verifyWebhook({ body: got.raw, headers: got.headers, secret: p.secret });
    assert.deepEqual([verified.id, verified.event], [q.body.data.deliveryId, "webhook.test"]);
    assert.throws(
      () =>
        verifyWebhook({
          body: JSON.stringify(JSON.parse(got.raw), null, 1),
          headers: got.headers,
          secret: p.secret,
        }),
      { code: "bad_signature" },
    );
    const [d] = await eventually(async () => {
      const list = await deliveries(p);
      return list[0]?.status === DeliveryStatus.DELIVERED ? list : undefined;
    });
    assert.equal(d.attempts, 1);
    assert.equal(d.responseCode, 200);
    assert.ok(d.deliveredAt);
  });

  it("retries a failure with the same X-Webhook-Id and a new timestamp and signature, then fails for good", async () => {
    const p = await newPartner();
    await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl: url });
    rx.set((r) => ({
      status: r.headers["x-webhook-id"] && r.body.data.partnerId === p.customerId ? 503 : 200,
    }));
    try {
      const q = await signed(p, "POST", "/api/v1/reseller/webhooks/test");
      const id = q.body.data.deliveryId as string;
      await eventually(async () => (await deliveries(p))[0].attempts === 1);
      const first = await deliveries(p);
      assert.equal(first[0].status, DeliveryStatus.PENDING);
      assert.equal(first[0].responseCode, 503);
      const wait = (timestampMs(first[0].nextAttemptAt!) - Date.now()) / 1000;
      assert.ok(wait > 50 && wait <= 60, `back-off ${wait}s`);
      for (let attempt = 2; attempt <= 5; attempt++) {
        await sql`update webhooks.deliveries set next_attempt_at = now() where id = ${id}`;
        await eventually(async () => (await deliveries(p))[0].attempts === attempt);
      }
      const attempts = rx.got.filter((r) => r.headers["x-webhook-id"] === id);
      assert.equal(attempts.length, 5);
      assert.equal(new Set(attempts.map((a) => a.headers["x-webhook-signature"])).size, 5);
      assert.equal(new Set(attempts.map((a) => a.body.timestamp)).size, 5);
      const [last] = await deliveries(p);
      assert.equal(last.status, DeliveryStatus.FAILED);
      // Failed is terminal: made due again, it is still never claimed. A newer delivery queued
      // behind it is attempted after it in creation order, so once the newer one arrives the
      // failed one would have had its sixth attempt already.
      await sql`update webhooks.deliveries set next_attempt_at = now() where id = ${id}`;
      rx.set((r) => ({ status: r.headers["x-webhook-id"] === id ? 503 : 200 }));
      const newer = (await signed(p, "POST", "/api/v1/reseller/webhooks/test")).body.data.deliveryId;
      await eventually(async () => rx.got.some((r) => r.headers["x-webhook-id"] === newer));
      assert.equal(rx.got.filter((r) => r.headers["x-webhook-id"] === id).length, 5, "failed is terminal");
      assert.equal((await deliveries(p)).find((d) => d.id === id)?.attempts, 5);
    } finally {
      rx.set(() => ({ status: 200 }));
    }
  });

  it("treats a redirect as a failure and never follows it", async () => {
    const p = await newPartner();
    await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl: `${url}?redirect=1` });
    // The redirect points at the same receiver, which answers 200 there: following it would succeed.
    rx.set((r) =>
      r.body.data.partnerId === p.customerId && r.path.includes("redirect=1")
        ? { status: 302, headers: { location: `${url}?followed=1` } }
        : { status: 200 },
    );
    try {
      await signed(p, "POST", "/api/v1/reseller/webhooks/test");
      const [d] = await eventually(async () => {
        const list = await deliveries(p);
        return list[0]?.attempts === 1 ? list : undefined;
      });
      assert.equal(d.lastError, "Endpoint returned a redirect, not followed");
      assert.equal(d.responseCode, 302);
      assert.equal(d.status, DeliveryStatus.PENDING);
      assert.deepEqual(
        rx.got.filter((r) => r.body.data.partnerId === p.customerId).map((r) => r.path),
        ["/hook?redirect=1"],
      );
    } finally {
      rx.set(() => ({ status: 200 }));
    }
  });

  it("fails an attempt that gets no answer within the deadline", async () => {
    const p = await newPartner();
    await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl: url });
    rx.set((r) => (r.body.data.partnerId === p.customerId ? { status: 200, hang: true } : { status: 200 }));
    try {
      await signed(p, "POST", "/api/v1/reseller/webhooks/test");
      const [d] = await eventually(async () => {
        const list = await deliveries(p);
        return list[0]?.attempts === 1 ? list : undefined;
      });
      assert.match(d.lastError, /No answer within/);
    } finally {
      rx.set(() => ({ status: 200 }));
    }
  });

  it("blocks a URL on file whose host is not public at delivery time, however it is spelt", async () => {
    // Only 127.0.0.1:<port> is allowed; the other spellings of the same receiver are not.
    const port = new URL(url).port;
    const stored = [
      "http://10.1.2.3:8080/hook",
      `http://[::7f00:1]:${port}/hook`,
      `http://[::ffff:7f00:1]:${port}/hook`,
      `http://[64:ff9b::7f00:1]:${port}/hook`,
      `http://localhost:${port}/hook`,
      `http://localhost.:${port}/hook`,
      `http://foo.localhost:${port}/hook`,
    ];
    const partners = await Promise.all(
      stored.map(async (stale) => {
        const p = await newPartner();
        await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl: url });
        // As if saved before the rules were what they are (or the name moved since).
        await sql`update webhooks.partner_webhooks set url = ${stale} where partner_id = ${p.customerId}`;
        return { p, id: (await signed(p, "POST", "/api/v1/reseller/webhooks/test")).body.data.deliveryId };
      }),
    );
    for (const [i, { p, id }] of partners.entries()) {
      const d = await afterAttempts(p, id, 1);
      assert.match(d.lastError, /blocked/, stored[i]);
      assert.equal(d.status, DeliveryStatus.PENDING, stored[i]);
      assert.equal(rx.got.filter((r) => r.body.data.partnerId === p.customerId).length, 0, stored[i]);
    }
  });

  it("blocks a name that resolved to an allowed address when saved and to a private one at delivery", async () => {
    const { readFileSync, writeFileSync } = await import("node:fs");
    const host = `rebind-${process.pid}.hb-test`;
    const original = readFileSync("/etc/hosts", "utf8");
    const withEntry = (ip: string) => writeFileSync("/etc/hosts", `${original.trimEnd()}\n${ip} ${host}\n`);
    const p = await newPartner();
    try {
      withEntry("10.20.30.40");
      const webhookUrl = `http://${host}:${new URL(url).port}/hook`;
      const refused = await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl });
      assert.equal(refused.status, 400, "a name resolving to a private address is refused when saved");
      withEntry("93.184.216.34"); // a public address: accepted (nothing connects to it at save)
      const saved = await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl });
      assert.equal(saved.status, 200, saved.text);
      withEntry("10.20.30.40"); // the name now points into a private network
      await signed(p, "POST", "/api/v1/reseller/webhooks/test");
      const [d] = await eventually(async () => {
        const list = await deliveries(p);
        return list[0]?.attempts === 1 ? list : undefined;
      });
      assert.match(d.lastError, /blocked/);
      assert.equal(rx.got.filter((r) => r.body.data.partnerId === p.customerId).length, 0);
    } finally {
      writeFileSync("/etc/hosts", original);
    }
  });

  it("fails each attempt of a partner with no signing secret with 'webhook secret not configured'", async () => {
    const p = await newPartner();
    await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl: url });
    await auth.rotatePartnerSecret({ customerId: p.customerId, clear: true });
    await webhooks.queueTest({ partnerId: p.customerId });
    const [d] = await eventually(async () => {
      const list = await deliveries(p);
      return list[0]?.attempts === 1 ? list : undefined;
    });
    assert.equal(d.lastError, "webhook secret not configured");
    assert.equal(rx.got.filter((r) => r.body.data.partnerId === p.customerId).length, 0);
  });

  it("sends nothing while the partner is pending or suspended, and sends it once active", async () => {
    const p = await newPartner(PartnerStatus.PENDING);
    const other = await newPartner();
    await webhooks.setWebhookUrl({ partnerId: p.customerId, url });
    await webhooks.setWebhookUrl({ partnerId: other.customerId, url });
    const received = (id: string) => rx.got.filter((r) => r.headers["x-webhook-id"] === id).length;
    const withheld = async () => {
      const { deliveryId } = await webhooks.queueTest({ partnerId: p.customerId });
      // Queued after p's delivery: a pass that claims this one claims p's too and serves p first
      // (creation order), so once this one is delivered, p's has had its chance.
      const later = (await webhooks.queueTest({ partnerId: other.customerId })).deliveryId;
      await eventually(
        async () =>
          (await deliveries(other)).find((d) => d.id === later)?.status === DeliveryStatus.DELIVERED,
      );
      assert.equal(received(deliveryId), 0);
      const d = (await deliveries(p)).find((x) => x.id === deliveryId)!;
      assert.deepEqual(
        { status: d.status, attempts: d.attempts },
        { status: DeliveryStatus.PENDING, attempts: 0 },
      );
      return deliveryId;
    };
    const whilePending = await withheld();
    await auth.setPartnerStatus({ customerId: p.customerId, status: PartnerStatus.ACTIVE });
    await eventually(async () => received(whilePending) === 1);
    await auth.setPartnerStatus({ customerId: p.customerId, status: PartnerStatus.SUSPENDED });
    const whileSuspended = await withheld();
    await auth.setPartnerStatus({ customerId: p.customerId, status: PartnerStatus.ACTIVE });
    await eventually(async () => received(whileSuspended) === 1);
  });

  it("drops an event raised while no URL is on file, and refuses a test without one", async () => {
    const p = await newPartner();
    const q = await signed(p, "POST", "/api/v1/reseller/webhooks/test");
    assert.equal(q.status, 409);
    const dropped = newId();
    await raiseServiceEvent(p.customerId, dropped); // consumed while no URL is on file
    await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl: url });
    const kept = newId();
    await raiseServiceEvent(p.customerId, kept);
    await eventually(async () => rx.got.some((r) => r.body.data.serviceId === kept));
    // The receiver sees the request before the sender has recorded its answer: wait for the record.
    await sentOn(p);
    const list = await deliveries(p);
    assert.equal(list.length, 1, "only the event raised with a URL on file was queued");
    assert.equal(list[0].status, DeliveryStatus.DELIVERED);
    assert.equal(rx.got.filter((r) => r.body.data.serviceId === dropped).length, 0);
  });

  it("drops an event that occurred before the URL went on file, even when it is read after", async () => {
    const p = await newPartner();
    const before = timestampFromDate(new Date(Date.now() - 60_000));
    await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl: url });
    const late = newId();
    await raiseServiceEvent(p.customerId, late, before); // read now, but raised a minute ago
    const kept = newId();
    await raiseServiceEvent(p.customerId, kept);
    await eventually(async () => rx.got.some((r) => r.body.data.serviceId === kept));
    await sentOn(p);
    assert.deepEqual(
      (await deliveries(p)).map((d) => d.status),
      [DeliveryStatus.DELIVERED],
      "only the event that occurred with a URL on file was queued",
    );
    assert.equal(rx.got.filter((r) => r.body.data.serviceId === late).length, 0);
  });

  it("attempts a partner's deliveries in creation order; a failing one is overtaken after back-off", async () => {
    const p = await newPartner(PartnerStatus.SUSPENDED);
    await webhooks.setWebhookUrl({ partnerId: p.customerId, url });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await webhooks.queueTest({ partnerId: p.customerId })).deliveryId);
    rx.set((r) => ({ status: r.headers["x-webhook-id"] === ids[0] ? 500 : 200 }));
    try {
      await auth.setPartnerStatus({ customerId: p.customerId, status: PartnerStatus.ACTIVE });
      await eventually(async () => rx.got.some((r) => r.headers["x-webhook-id"] === ids[2]));
      const order = rx.got
        .filter((r) => ids.includes(r.headers["x-webhook-id"] as string))
        .map((r) => ids.indexOf(r.headers["x-webhook-id"] as string));
      assert.deepEqual(order, [0, 1, 2]);
      assert.ok(
        rx.got.find((r) => r.headers["x-webhook-id"] === ids[1])!.at >
          rx.got.find((r) => r.headers["x-webhook-id"] === ids[0])!.at,
      );
    } finally {
      rx.set(() => ({ status: 200 }));
    }
  });

  it("stores every event of a burst as a delivery within seconds, the last ones included", async () => {
    const p = await newPartner(PartnerStatus.SUSPENDED); // nothing is sent: only the queue is read
    await webhooks.setWebhookUrl({ partnerId: p.customerId, url });
    const ns = process.env.HB_NS!;
    const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
    const js = jetstream(nc);
    const burst = 700; // more than one pull's worth (500)
    try {
      for (let i = 0; i < burst; i += 100) {
        await Promise.all(
          Array.from({ length: 100 }, () => {
            const event = create(EventSchema, {
              id: newId(),
              type: "service.suspended",
              occurredAt: timestampNow(),
              partnerId: p.customerId,
              payload: {
                case: "service",
                value: { serviceId: newId(), status: ServiceStatus.SUSPENDED, hostname: "h" },
              },
            });
            return js.publish(`${ns}.events.service.suspended`, toBinary(EventSchema, event), {
              msgID: event.id,
            });
          }),
        );
      }
    } finally {
      await nc.close();
    }
    // Far below the pull's 30 s expiry, which the end of a burst once waited for.
    const stored = async () =>
      (await sql`select count(*)::int as n from webhooks.deliveries where partner_id = ${p.customerId}`)[0].n;
    await eventually(async () => (await stored()) === burst, 10_000, 50).catch(async () =>
      assert.fail(`${await stored()} of ${burst} events stored 10 s after the burst`),
    );
  });

  it("keeps programme settings within 1-10 attempts and 10-3600 s", async () => {
    await assert.rejects(webhooks.updateProgrammeSettings({ maxAttempts: 11 }), /1 to 10/);
    await assert.rejects(webhooks.updateProgrammeSettings({ baseDelaySeconds: 5 }), /10 to 3600/);
    const { settings } = await webhooks.getProgrammeSettings({});
    assert.deepEqual({ a: settings!.maxAttempts, d: settings!.baseDelaySeconds }, { a: 5, d: 60 });
  });

  it("an order placed by a partner reaches the receiver as order.paid and service.provisioned, with the partner's ids", async () => {
    const p = await newPartner();
    await addCredit({ customerId: p.customerId, ownerId: p.ownerId, key: p.key, keyId: "" }, "100");
    await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl: url });
    const product = await newProduct("vps");
    const r = await signed(p, "POST", "/api/v1/reseller/orders", {
      externalOrderId: "ext-42",
      externalCustomerId: "cust-7",
      paymentMode: "credit",
      items: [{ productId: product.id, billingCycle: "monthly", hostname: "partner-vm" }],
    });
    assert.equal(r.status, 201, r.text);
    const mine = () =>
      rx.got.filter(
        (g) => g.body.data.externalOrderId === "ext-42" && g.body.data.orderId === r.body.data.id,
      );
    await eventually(async () => mine().some((g) => g.body.event === "order.paid"), 15_000);
    const provisioned = mine().find((g) => g.body.event === "service.provisioned")!;
    assert.ok(provisioned);
    assert.equal(provisioned.body.data.externalCustomerId, "cust-7");
    assert.equal(provisioned.body.data.hostname, "partner-vm");
    assert.ok(provisioned.body.data.serverIp);
    const paid = mine().find((g) => g.body.event === "order.paid")!;
    assert.equal(paid.body.data.paymentMode, "credit");
    assert.equal(paid.body.data.amount, 10);
    const found = await signed(p, "GET", "/api/v1/reseller/orders?externalOrderId=ext-42");
    assert.equal(found.body.data.orders.length, 1);
    const one = await signed(p, "GET", `/api/v1/reseller/orders/${r.body.data.id}`);
    assert.equal(one.body.data.payment_status, "paid");
    assert.equal(one.body.data.provisioning_status, "completed");
    assert.equal(one.body.data.services[0].hostname, "partner-vm");
    const serviceId = one.body.data.services[0].id;
    assert.equal(
      (await signed(p, "POST", `/api/v1/reseller/services/${serviceId}/suspend`, { reason: "unpaid" }))
        .status,
      200,
    );
    await eventually(async () =>
      rx.got.some((g) => g.body.event === "service.suspended" && g.body.data.serviceId === serviceId),
    );
  });

  it("a credit order the partner cannot cover raises order.payment_failed and can be retried", async () => {
    const p = await newPartner();
    await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl: url });
    const product = await newProduct("vps");
    const r = await signed(p, "POST", "/api/v1/reseller/orders", {
      externalOrderId: "ext-poor",
      paymentMode: "credit",
      items: [{ productId: product.id, billingCycle: "monthly" }],
    });
    assert.equal(r.status, 201, r.text);
    const failed = await eventually(async () =>
      rx.got.find((g) => g.body.event === "order.payment_failed" && g.body.data.orderId === r.body.data.id),
    );
    assert.ok(failed.body.data.paymentError);
    await addCredit({ customerId: p.customerId, ownerId: p.ownerId, key: p.key, keyId: "" }, "50");
    const retry = await signed(p, "POST", `/api/v1/reseller/orders/${r.body.data.id}/retry-payment`);
    assert.equal(retry.status, 200, retry.text);
    assert.equal(retry.body.data.payment_status, "paid");
  });
});
