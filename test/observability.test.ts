import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";

import { WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { WebhooksStaffService } from "@hb/contracts/hb/webhooks/v1/webhooks_staff_pb";
import { signResellerRequest } from "@hb/webhook-signature";
import { newProduct } from "./helpers.ts";
import { type OwnStack, ownStack } from "./own-stack.ts";
import { stackClient } from "./support/clients.ts";
import { eventually } from "./support/eventually.ts";
import { captureLogs, type LogLine, metricsText, sample } from "./support/stack-output.ts";

// The services' own log lines are read, so this file runs a stack of its own at debug level.
const SERVICES = ["gateway", "auth", "billing", "compute", "webhooks"] as const;
type Service = (typeof SERVICES)[number];

describe("observability", () => {
  let s: OwnStack;
  let logs: Record<Service, LogLine[]>;
  let billing: ReturnType<typeof stackClient<[typeof BillingService, typeof BillingStaffService]>>;
  let webhooks: ReturnType<typeof stackClient<[typeof WebhooksService, typeof WebhooksStaffService]>>;
  const received: { event: string; data: { orderId?: string } }[] = [];
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString()));
      res.writeHead(200).end("ok");
    });
  });
  const scrape = (service: Service) => metricsText(s, service);

  before(async () => {
    s = await ownStack("obs", { LOG_LEVEL: "debug" });
    logs = captureLogs(s, SERVICES);
    billing = stackClient(s.stack.env, [BillingService, BillingStaffService], "BILLING_ADDR");
    webhooks = stackClient(s.stack.env, [WebhooksService, WebhooksStaffService], "WEBHOOKS_ADDR");
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  });
  after(async () => {
    receiver.close();
    billing?.close();
    webhooks?.close();
    await s?.close();
  });

  it("an order's request id and trace reach the logs of gateway, auth, billing and webhooks, and every service's metrics move", async () => {
    const { customer, owner } = await s.auth.createCustomer({
      name: "Obs Partner",
      email: "obs@example.test",
      currency: "EUR",
    });
    const { signingSecret } = await s.auth.createPartner({
      customerId: customer!.id,
      status: PartnerStatus.ACTIVE,
    });
    const { secretKey } = await s.auth.createKey({
      personId: owner!.id,
      label: "reseller",
      scopes: ["account", "orders"],
      ipAllowlist: "",
    });
    const product = await newProduct("vps", { monthly: "10.0000" }, "EUR", billing.client);
    const { port } = receiver.address() as { port: number };
    await webhooks.client.updateProgrammeSettings({ addAllowedDestinations: [`127.0.0.1:${port}`] });
    const signedCall = (
      method: string,
      path: string,
      body: unknown,
      headers: Record<string, string> = {},
    ) => {
      const raw = JSON.stringify(body);
      return fetch(`${s.stack.gatewayUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${secretKey}`,
          "content-type": "application/json",
          ...signResellerRequest({ body: raw, secret: signingSecret }),
          ...headers,
        },
        body: raw,
      });
    };
    const hook = await signedCall("PUT", "/api/v1/reseller/account/webhook", {
      webhookUrl: `http://127.0.0.1:${port}/hook`,
    });
    assert.equal(hook.status, 200, await hook.text());

    // No credit: the order's payment fails within the request, and order.payment_failed is
    // raised in its transaction (a paid partner order's order.paid comes later, from provisioning).
    const requestId = `obs-order.${randomBytes(6).toString("hex")}`;
    const res = await signedCall(
      "POST",
      "/api/v1/reseller/orders",
      {
        externalOrderId: "obs-1",
        paymentMode: "credit",
        items: [{ productId: product.id, billingCycle: "monthly", hostname: "obs-vm" }],
      },
      { "x-request-id": requestId },
    );
    const order = (await res.json()) as { data: { id: string } };
    assert.equal(res.status, 201);
    assert.equal(res.headers.get("x-request-id"), requestId, "the answer echoes the caller's request id");
    await eventually(async () =>
      received.some((r) => r.event === "order.payment_failed" && r.data.orderId === order.data.id),
    );

    const gatewayLine = await eventually(async () =>
      logs.gateway.find((l) => l.request_id === requestId && l.msg === "request handled"),
    );
    const traceId = gatewayLine.trace_id!;
    assert.match(traceId, /^[0-9a-f]{32}$/);
    // gateway -> auth (key check) -> billing (the order, its outbox row) -> NATS -> webhooks
    // (the event consumed, then delivered): each service logs under the same trace and request.
    const expected: Service[] = ["gateway", "auth", "billing", "webhooks"];
    const tracedIn = () => SERVICES.filter((n) => logs[n].some((l) => l.trace_id === traceId));
    await eventually(async () => expected.every((n) => tracedIn().includes(n)), 15_000).catch(() => {});
    assert.deepEqual(
      tracedIn().filter((n) => expected.includes(n)),
      expected,
      `log lines under trace ${traceId}: ${JSON.stringify(SERVICES.map((n) => [n, logs[n].filter((l) => l.request_id === requestId || l.trace_id === traceId).map((l) => l.msg)]))}`,
    );
    for (const n of ["auth", "billing", "webhooks"] as const) {
      const line = logs[n].find((l) => l.trace_id === traceId)!;
      assert.equal(line.request_id, requestId, `${n} logs the request id`);
    }
    // The attempt is logged once the receiver has answered, a moment after the test saw it.
    await eventually(async () =>
      logs.webhooks.some((l) => l.trace_id === traceId && l.msg === "webhook attempt"),
    );

    // The hourly limit refuses one call, so the refusal counter moves.
    await s.auth.updateSettings({ hourlyRequestLimit: 1 });
    try {
      const limited = (
        await s.auth.createKey({ personId: owner!.id, label: "limited", scopes: [], ipAllowlist: "" })
      ).secretKey;
      const get = () =>
        fetch(`${s.stack.gatewayUrl}/api/v1/`, { headers: { authorization: `Bearer ${limited}` } });
      assert.equal((await get()).status, 200);
      assert.equal((await get()).status, 429);
    } finally {
      await s.auth.updateSettings({ hourlyRequestLimit: 1000 });
    }

    const gateway = await scrape("gateway");
    const orders = { method: "POST", route: "/api/v1/reseller/orders", status: "201" };
    assert.ok((sample(gateway, "http_requests_total", orders) ?? 0) >= 1, "requests by route template");
    assert.ok((sample(gateway, "http_request_duration_seconds_count", orders) ?? 0) >= 1);
    assert.ok((sample(gateway, "gateway_rate_limit_refusals_total", { code: "RATE_LIMITED" }) ?? 0) >= 1);
    // Keys are checked from the key table (the 429 above) or by auth.Verify (the signed routes).
    const keyCheck = (source: string, outcome: string) =>
      sample(gateway, "gateway_key_checks_total", { source, outcome }) ?? 0;
    assert.ok(keyCheck("table", "refused") >= 1);
    assert.ok(keyCheck("auth", "accepted") >= 1);
    assert.equal(
      sample(gateway, "http_requests_total", { route: `/api/v1/reseller/orders/${order.data.id}` }),
      undefined,
      "no raw paths as labels",
    );

    const auth = await scrape("auth");
    assert.ok((sample(auth, "auth_key_verification_seconds_count", { outcome: "accepted" }) ?? 0) >= 1);
    const verify = { method: "/hb.auth.v1.AuthService/Verify", code: "OK" };
    assert.ok((sample(auth, "rpc_server_handled_total", verify) ?? 0) >= 1);
    assert.ok((sample(auth, "rpc_server_handling_seconds_count", verify) ?? 0) >= 1);

    const billingMetrics = await scrape("billing");
    assert.ok((sample(billingMetrics, "rpc_server_handled_total", { code: "OK" }) ?? 0) >= 1);
    assert.ok((sample(billingMetrics, "outbox_publish_delay_seconds_count") ?? 0) >= 1, "outbox lag");
    assert.notEqual(sample(billingMetrics, "outbox_oldest_unpublished_seconds"), undefined);

    const compute = await scrape("compute");
    const health = { method: "/grpc.health.v1.Health/Check", code: "OK" };
    assert.ok((sample(compute, "rpc_server_handled_total", health) ?? 0) >= 1, "the start-up probes");
    assert.notEqual(sample(compute, "outbox_oldest_unpublished_seconds"), undefined);

    const hooks = await scrape("webhooks");
    assert.ok((sample(hooks, "webhook_deliveries_total", { outcome: "delivered" }) ?? 0) >= 1);
    assert.notEqual(sample(hooks, "webhook_queue_depth"), undefined);

    // No log line, at debug level, carries a key, a signing secret or a signature.
    for (const n of SERVICES) {
      for (const l of logs[n]) {
        assert.ok(!l.raw.includes(secretKey.split("_")[2]), `${n} logged a key`);
        assert.ok(!l.raw.includes(signingSecret), `${n} logged a signing secret`);
        assert.ok(!/sha256=|x-reseller-signature/i.test(l.raw), `${n} logged a signature`);
      }
    }
  });

  it("a caller's traceparent continues its trace through the gateway to auth", async () => {
    const { owner } = await s.auth.createCustomer({ name: "T", email: "t@example.test", currency: "EUR" });
    // A key the gateway has not seen yet: its secret is confirmed by auth.Verify.
    const { secretKey } = await s.auth.createKey({
      personId: owner!.id,
      label: "t",
      scopes: [],
      ipAllowlist: "",
    });
    const traceId = randomBytes(16).toString("hex");
    const res = await fetch(`${s.stack.gatewayUrl}/api/v1/`, {
      headers: {
        authorization: `Bearer ${secretKey}`,
        traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-01`,
      },
    });
    assert.equal(res.status, 200);
    const requestId = res.headers.get("x-request-id");
    assert.match(requestId ?? "", /^req_[0-9a-f-]{36}$/, "a new request id when none was sent");
    await eventually(async () => logs.auth.some((l) => l.trace_id === traceId && l.request_id === requestId));
    await eventually(async () =>
      logs.gateway.some((l) => l.trace_id === traceId && l.request_id === requestId),
    );
  });

  it("every answer carries X-Request-Id: a malformed one is replaced, refusals and 404s included", async () => {
    const get = (path: string, id: string) =>
      fetch(`${s.stack.gatewayUrl}${path}`, { headers: { "x-request-id": id } });
    const notFound = await get("/nowhere", "abc-123");
    assert.deepEqual([notFound.status, notFound.headers.get("x-request-id")], [404, "abc-123"]);
    const refused = await get("/api/v1/", "abc-124");
    assert.deepEqual([refused.status, refused.headers.get("x-request-id")], [401, "abc-124"]);
    for (const bad of ["has space", "x".repeat(129), 'quote"d', "line%0Abreak"]) {
      const r = await get("/healthz", bad);
      assert.match(r.headers.get("x-request-id") ?? "", /^req_[0-9a-f-]{36}$/, bad);
    }
  });
});
