import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { WebhooksService } from "@hb/contracts/webhooks/v1/webhooks_pb";
import { signRequest, verifyWebhookSignature } from "@hb/platform";
import postgres from "postgres";
import { addCredit, api, auth, eventually, grpc, newAccount, newProduct } from "./helpers.ts";

const webhooks = grpc(WebhooksService, "WEBHOOKS_ADDR");
const sql = postgres(process.env.DATABASE_URL!, { max: 2, onnotice: () => {} });

interface Received {
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: { event: string; timestamp: string; data: Record<string, unknown> };
  at: number;
}

/** A real receiver on loopback; `respond` decides each answer. */
function receiver() {
  const got: Received[] = [];
  let respond: (r: Received) => { status: number; headers?: Record<string, string>; hang?: boolean } =
    () => ({ status: 200 });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString();
      const r = { headers: req.headers, raw, body: JSON.parse(raw), at: Date.now() };
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
      return `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
    },
  };
}

interface Partner {
  customerId: string;
  ownerId: string;
  secret: string;
  key: string;
}

async function newPartner(status = "active"): Promise<Partner> {
  const acct = await newAccount();
  const { signingSecret } = await auth.createPartner({ customerId: acct.customerId, status });
  const { secretKey } = await auth.createKey({
    personId: acct.ownerId,
    label: "reseller",
    scopes: ["account", "orders"],
    ipAllowlist: "",
    expiresOn: "",
  });
  return { customerId: acct.customerId, ownerId: acct.ownerId, secret: signingSecret, key: secretKey };
}

/** A signed reseller request: signature over "<timestamp>.<raw body>". */
function signed(
  p: Partner,
  method: string,
  path: string,
  body?: unknown,
  opts: { secret?: string; timestamp?: string } = {},
) {
  const raw = body === undefined ? "" : JSON.stringify(body);
  const ts = opts.timestamp ?? String(Math.floor(Date.now() / 1000));
  return api(method, path, {
    key: p.key,
    rawBody: raw || undefined,
    headers: {
      "content-type": "application/json",
      "x-reseller-timestamp": ts,
      "x-reseller-signature": signRequest(opts.secret ?? p.secret, ts, raw),
    },
  });
}

const deliveries = async (p: Partner) =>
  (await webhooks.listDeliveries({ partnerId: p.customerId, limit: 100 })).deliveries;

describe("reseller request authentication", () => {
  it("needs a partner's key with the account scope and a valid signature", async () => {
    const p = await newPartner();
    assert.equal((await signed(p, "GET", "/api/v1/reseller/services")).status, 200);
    const unsigned = await api("GET", "/api/v1/reseller/services", { key: p.key });
    assert.equal(unsigned.status, 401);
    assert.equal(
      (await signed(p, "GET", "/api/v1/reseller/services", undefined, { secret: "whsec_wrong" })).status,
      401,
    );
    const old = String(Math.floor(Date.now() / 1000) - 3600);
    assert.equal(
      (await signed(p, "GET", "/api/v1/reseller/services", undefined, { timestamp: old })).status,
      401,
      "no replay",
    );
    const customer = await newAccount();
    const r = await api("GET", "/api/v1/reseller/services", { key: customer.key });
    assert.equal(r.status, 403);
    await assert.rejects(
      auth.createKey({
        personId: customer.ownerId,
        label: "x",
        scopes: ["account"],
        ipAllowlist: "",
        expiresOn: "",
      }),
      /reseller partners/,
    );
  });

  it("refuses requests signed with the old secret at once after rotation", async () => {
    const p = await newPartner();
    const { signingSecret } = await auth.rotatePartnerSecret({ customerId: p.customerId });
    assert.equal((await signed(p, "GET", "/api/v1/reseller/services")).status, 401);
    assert.equal(
      (await signed({ ...p, secret: signingSecret }, "GET", "/api/v1/reseller/services")).status,
      200,
    );
  });
});

describe("webhook endpoint URL", () => {
  it("refuses non-http schemes, private and link-local hosts, and clears with empty", async () => {
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
    ]) {
      const r = await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl });
      assert.equal(r.status, 400, `${webhookUrl}: ${r.text}`);
      assert.equal(r.body.details[0].field, "webhookUrl");
    }
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
    assert.ok(verifyWebhookSignature(p.secret, got.raw, got.headers["x-webhook-signature"] as string));
    assert.ok(
      !verifyWebhookSignature(
        p.secret,
        JSON.stringify(JSON.parse(got.raw), null, 1),
        got.headers["x-webhook-signature"] as string,
      ),
    );
    const [d] = await eventually(async () => {
      const list = await deliveries(p);
      return list[0]?.status === "delivered" ? list : undefined;
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
      assert.equal(first[0].status, "pending");
      assert.equal(first[0].responseCode, 503);
      const wait = (Date.parse(first[0].nextAttemptAt) - Date.now()) / 1000;
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
      assert.equal(last.status, "failed");
      await sql`update webhooks.deliveries set next_attempt_at = now() where id = ${id}`;
      await new Promise((r) => setTimeout(r, 800));
      assert.equal(rx.got.filter((r) => r.headers["x-webhook-id"] === id).length, 5, "failed is terminal");
    } finally {
      rx.set(() => ({ status: 200 }));
    }
  });

  it("treats a redirect as a failure and never follows it", async () => {
    const p = await newPartner();
    await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl: `${url}?redirect=1` });
    rx.set((r) =>
      r.body.data.partnerId === p.customerId
        ? { status: 302, headers: { location: "http://127.0.0.1:1/elsewhere" } }
        : { status: 200 },
    );
    try {
      await signed(p, "POST", "/api/v1/reseller/webhooks/test");
      const [d] = await eventually(async () => {
        const list = await deliveries(p);
        return list[0]?.attempts === 1 ? list : undefined;
      });
      assert.equal(d.lastError, "Endpoint returned a redirect, not followed");
      assert.equal(d.status, "pending");
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

  it("blocks a host that resolves to a private address at delivery time", async () => {
    const p = await newPartner();
    await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl: url });
    // As if the name now pointed somewhere private.
    await sql`update webhooks.partner_webhooks set url = 'http://10.1.2.3:8080/hook' where partner_id = ${p.customerId}`;
    await signed(p, "POST", "/api/v1/reseller/webhooks/test");
    const [d] = await eventually(async () => {
      const list = await deliveries(p);
      return list[0]?.attempts === 1 ? list : undefined;
    });
    assert.match(d.lastError, /blocked/);
  });

  it("blocks a name that resolved to an allowed address when saved and to a private one at delivery", async () => {
    const { readFileSync, writeFileSync } = await import("node:fs");
    const host = `rebind-${process.pid}.hb-test`;
    const original = readFileSync("/etc/hosts", "utf8");
    const withEntry = (ip: string) => writeFileSync("/etc/hosts", `${original.trimEnd()}\n${ip} ${host}\n`);
    const p = await newPartner();
    try {
      withEntry("127.0.0.1"); // allowed in tests, like a public address in production
      const port = new URL(url).port;
      const saved = await signed(p, "PUT", "/api/v1/reseller/account/webhook", {
        webhookUrl: `http://${host}:${port}/hook`,
      });
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

  it("sends nothing while the partner is pending or suspended", async () => {
    const p = await newPartner("pending");
    await webhooks.setWebhookUrl({ partnerId: p.customerId, url });
    await webhooks.queueTest({ partnerId: p.customerId });
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(rx.got.filter((r) => r.body.data.partnerId === p.customerId).length, 0);
    assert.equal((await deliveries(p))[0].attempts, 0);
    await auth.setPartnerStatus({ customerId: p.customerId, status: "active" });
    await eventually(async () => rx.got.some((r) => r.body.data.partnerId === p.customerId));
  });

  it("drops an event raised while no URL is on file, and refuses a test without one", async () => {
    const p = await newPartner();
    const q = await signed(p, "POST", "/api/v1/reseller/webhooks/test");
    assert.equal(q.status, 409);
    assert.equal((await deliveries(p)).length, 0);
  });

  it("attempts a partner's deliveries in creation order; a failing one is overtaken after back-off", async () => {
    const p = await newPartner("suspended");
    await webhooks.setWebhookUrl({ partnerId: p.customerId, url });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await webhooks.queueTest({ partnerId: p.customerId })).deliveryId);
    rx.set((r) => ({ status: r.headers["x-webhook-id"] === ids[0] ? 500 : 200 }));
    try {
      await auth.setPartnerStatus({ customerId: p.customerId, status: "active" });
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
