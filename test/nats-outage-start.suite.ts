import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";

import { WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { WebhooksStaffService } from "@hb/contracts/hb/webhooks/v1/webhooks_staff_pb";
import { signResellerRequest } from "@hb/webhook-signature";
import postgres from "postgres";
import { eventually, newProduct } from "./helpers.ts";
import type { OwnStack } from "./own-stack.ts";
import { stackClient } from "./support/clients.ts";
import { natsFaultStack } from "./support/nats-fault-stack.ts";
import type { PrivateServer } from "./support/private-servers.ts";

// The stack starts while its private NATS server is down: it serves keyed requests at once, keeps
// what needs NATS (events in the outboxes, request-log entries in the gateway's buffer) and hands
// it on within 10 s of NATS starting.
describe("started while NATS is down", () => {
  let nats: PrivateServer;
  let s: OwnStack;
  let sql: postgres.Sql;
  const received: Array<{ id: string; event: string; externalOrderId?: string }> = [];
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as {
        event: string;
        data: { externalOrderId?: string };
      };
      received.push({
        id: String(req.headers["x-webhook-id"]),
        event: body.event,
        externalOrderId: body.data.externalOrderId,
      });
      res.writeHead(200).end();
    });
  });

  before(async () => {
    // Started with its NATS server down, this suite being the first to ask.
    ({ nats, s } = await natsFaultStack());
    sql = postgres(s.stack.env.DATABASE_URL, { max: 1, onnotice: () => {} });
    // Connected now and held: the shared server may have no connection to spare at the end.
    await sql`select 1`;
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  });
  after(async () => {
    receiver.close();
    await sql?.end({ timeout: 5 });
  });

  const healthOf = async () =>
    ((await (await fetch(`${s.stack.gatewayUrl}/healthz`)).json()) as { data: unknown }).data;

  it("serves keyed requests, keeps the events, and delivers them within 10 s of NATS starting", async () => {
    const { customer, owner } = await s.auth.createCustomer({
      name: "Partner",
      email: "natsdown@example.test",
      currency: "EUR",
    });
    const partnerId = customer!.id;
    const { signingSecret } = await s.auth.createPartner({
      customerId: partnerId,
      status: PartnerStatus.ACTIVE,
    });
    const { key, secretKey } = await s.auth.createKey({
      personId: owner!.id,
      label: "reseller",
      scopes: ["account", "orders"],
      ipAllowlist: "",
    });
    const billing = stackClient(s.stack.env, [BillingService, BillingStaffService], "BILLING_ADDR");
    const webhooks = stackClient(s.stack.env, [WebhooksService, WebhooksStaffService], "WEBHOOKS_ADDR");
    const port = (receiver.address() as { port: number }).port;
    try {
      const product = await newProduct("vps", { monthly: "10.0000" }, "EUR", billing.client);
      await billing.client.adminAdjustCredit({
        personId: owner!.id,
        customerId: partnerId,
        amount: "100",
        currency: "EUR",
        description: "test",
      });
      await webhooks.client.updateProgrammeSettings({ addAllowedDestinations: [`127.0.0.1:${port}`] });
      await webhooks.client.setWebhookUrl({ partnerId, url: `http://127.0.0.1:${port}/` });

      const signed = async (method: string, path: string, body?: unknown) => {
        const raw = body === undefined ? "" : JSON.stringify(body);
        const res = await fetch(`${s.stack.gatewayUrl}/api/v1${path}`, {
          method,
          headers: {
            authorization: `Bearer ${secretKey}`,
            "content-type": "application/json",
            ...signResellerRequest({ body: raw, secret: signingSecret }),
          },
          body: raw || undefined,
        });
        const text = await res.text();
        return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
      };

      assert.deepEqual(await healthOf(), { status: "degraded", degraded: ["nats"] });

      const placed = await signed("POST", "/reseller/orders", {
        externalOrderId: "ext-natsdown",
        paymentMode: "credit",
        items: [{ productId: product.id, billingCycle: "monthly", hostname: "down-1" }],
      });
      assert.equal(placed.status, 201, placed.text);
      const balance = await billing.client.getAccount({
        caller: { customerId: partnerId, personId: owner!.id },
      });
      assert.equal(balance.balance?.amount, "90.0000", "charged from credit at once");
      // The event stream cannot promise every event without NATS: it is refused, to be retried.
      const stream = await signed("GET", "/reseller/webhooks/stream");
      assert.equal(stream.status, 503, stream.text);
      assert.equal(stream.body.code, "SERVICE_UNAVAILABLE");

      // The service is built, but its machine event waits in compute's outbox for NATS.
      await eventually(
        async () =>
          (
            await sql`select 1 from compute.outbox where published_at is null and subject like '%.events.machine.%'`
          ).length > 0,
        20_000,
        100,
      );
      assert.equal(received.length, 0);

      await nats.start();
      const returned = Date.now();
      const paid = await eventually(
        async () => received.find((r) => r.event === "order.paid" && r.externalOrderId === "ext-natsdown"),
        15_000,
        100,
      );
      assert.ok(paid);
      const elapsed = Date.now() - returned;
      assert.ok(elapsed <= 10_000, `order.paid delivered ${elapsed} ms after NATS started`);
      assert.equal(new Set(received.map((r) => r.id)).size, received.length, "each delivery once");
      // The keyed requests made while NATS was down reach auth's request log from the buffer.
      await eventually(
        async () => (await sql`select 1 from auth.request_log where key_id = ${key!.id}`).length >= 2,
        10_000,
        100,
      );
      assert.deepEqual(await healthOf(), { status: "ok" });
    } finally {
      billing.close();
      webhooks.close();
    }
  });
});
