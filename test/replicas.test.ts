import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";
import { ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { ComputeService } from "@hb/contracts/hb/compute/v1/compute_pb";
import { ComputeStaffService } from "@hb/contracts/hb/compute/v1/compute_staff_pb";
import { InstanceState, MachineKind } from "@hb/contracts/hb/compute/v1/machines_pb";
import { newId } from "@hb/platform";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import postgres from "postgres";
import { eventually, kindOf, newProduct } from "./helpers.ts";
import { type ReplicaStack, replicaStack } from "./replica-stack.ts";
import { stackClient } from "./support/clients.ts";
import { publishServiceEvent } from "./support/service-events.ts";

// Issue 11, part 6: two replicas of every service on one machine behave as one.
describe("two replicas of every service", () => {
  let s: ReplicaStack;
  const clients: { close(): void }[] = [];
  const receiver: { server: http.Server; got: Map<string, { id: string; seq: number }[]> } = {
    got: new Map(),
    server: http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { data: { hostname?: string } };
        const partner = req.url ?? "";
        const list = receiver.got.get(partner) ?? [];
        list.push({ id: req.headers["x-webhook-id"] as string, seq: Number(body.data.hostname?.slice(2)) });
        receiver.got.set(partner, list);
        res.writeHead(200).end();
      });
    }),
  };

  before(async () => {
    // The delivery test asserts exactly once, which holds only while every attempt is answered
    // within its deadline. With the suite's 1.5 s deadline, on two cores shared with ten services,
    // an attempt the receiver has taken can time out and be sent again, as at-least-once delivery
    // allows: the likely cause of the one duplicate seen here in CI (stop 11).
    s = await replicaStack("replicas", { WEBHOOK_TIMEOUT_MS: "15000" });
    await new Promise<void>((r) => receiver.server.listen(0, "127.0.0.1", r));
  });
  after(async () => {
    for (const c of clients) c.close();
    receiver.server.close();
    await s?.close();
  });

  const newCustomer = async (scopes = ["services", "orders", "billing", "destructive"]) => {
    const { customer, owner } = await s.auth.createCustomer({
      name: "R",
      email: `${newId()}@example.test`,
      currency: "EUR",
    });
    const { secretKey } = await s.auth.createKey({
      personId: owner!.id,
      label: "r",
      scopes,
      ipAllowlist: "",
    });
    return { customerId: customer!.id, ownerId: owner!.id, key: secretKey };
  };
  const call = async (
    base: string,
    method: string,
    path: string,
    key: string,
    body?: unknown,
    idempotencyKey?: string,
  ) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text) as { code?: string }, text };
  };

  it("both gateway replicas give the same answers", async () => {
    const c = await newCustomer();
    // The hourly window's remaining count is the one field that moves between two calls.
    const steady = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(steady)
        : v && typeof v === "object"
          ? Object.fromEntries(
              Object.entries(v)
                .filter(([k]) => k !== "remaining")
                .map(([k, x]) => [k, steady(x)]),
            )
          : v;
    for (const path of ["/", "/services", "/account", "/account/balance", "/invoices", "/nope"]) {
      const a = await call(s.gateways[0], "GET", path, c.key);
      const b = await call(s.gateways[1], "GET", path, c.key);
      assert.equal(a.status, b.status, path);
      assert.deepEqual(steady(a.body), steady(b.body), path);
    }
    const [a, b] = await Promise.all(s.gateways.map((g) => call(g, "GET", "/", "nonsense")));
    assert.deepEqual([a.status, a.body], [b.status, b.body]);
  });

  it("the hourly limit is exact across gateway replicas: 200 concurrent requests, accepted = the limit", async () => {
    const limit = 37;
    await s.auth.updateSettings({ hourlyRequestLimit: limit });
    try {
      // The window is the clock hour: a burst that straddles one is run again with a fresh key.
      for (;;) {
        const c = await newCustomer();
        const hour = Math.floor(Date.now() / 3_600_000);
        const answers = await Promise.all(
          Array.from({ length: 200 }, (_, i) => call(s.gateways[i % 2], "GET", "/", c.key)),
        );
        if (Math.floor(Date.now() / 3_600_000) !== hour) continue;
        const accepted = answers.filter((r) => r.status === 200).length;
        const refused = answers.filter((r) => r.status === 429 && r.body.code === "RATE_LIMITED").length;
        assert.deepEqual({ accepted, refused }, { accepted: limit, refused: 200 - limit });
        break;
      }
    } finally {
      await s.auth.updateSettings({ hourlyRequestLimit: 1000 });
    }
  });

  it("a cool-down is exact across gateway replicas", async () => {
    const c = await newCustomer();
    const billing = stackClient(s.env, [BillingService, BillingStaffService], "BILLING_ADDR");
    const compute = stackClient(s.env, [ComputeService, ComputeStaffService], "COMPUTE_ADDR");
    clients.push(billing, compute);
    const product = await newProduct("dedicated", undefined, "EUR", billing.client);
    const { service } = await billing.client.adminCreateService({
      customerId: c.customerId,
      productId: product.id,
      kind: kindOf("dedicated"),
      status: ServiceStatus.ACTIVE,
    });
    await compute.client.adminCreateMachine({
      serviceId: service!.id,
      customerId: c.customerId,
      kind: MachineKind.DEDICATED,
      state: InstanceState.RUNNING,
    });
    // Dedicated power: 5 a minute, failed calls counted too, so every answer that is not the
    // cool-down's 429 used one of the five.
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        call(s.gateways[i % 2], "POST", `/dedicated/${service!.id}/power`, c.key, { action: "restart" }),
      ),
    );
    const limited = answers.filter((r) => r.status === 429 && r.body.code === "ACTION_RATE_LIMITED").length;
    assert.equal(40 - limited, 5, answers.map((r) => r.status).join(","));
  });

  it("orders through both replicas: each charged once, each service built once and active", async () => {
    const c = await newCustomer();
    const billing = stackClient(s.env, [BillingService, BillingStaffService], "BILLING_ADDR");
    clients.push(billing);
    const product = await newProduct("vps", { monthly: "10.0000" }, "EUR", billing.client);
    await billing.client.adminAdjustCredit({
      personId: c.ownerId,
      customerId: c.customerId,
      amount: "1000",
      currency: "EUR",
      description: "replicas",
    });
    const n = 20;
    // As a careful client places them: a 5xx (an overloaded replica's deadline) is sent again with
    // the same Idempotency-Key, to the other gateway, so a retry is charged once too.
    const place = (i: number) => {
      const idempotencyKey = newId();
      let attempt = 0;
      return eventually(
        async () => {
          const r = await call(
            s.gateways[(i + attempt++) % 2],
            "POST",
            "/orders",
            c.key,
            { productId: product.id, billingCycle: "monthly" },
            idempotencyKey,
          );
          if (r.status >= 500) throw new Error(`${r.status} ${r.text}`);
          return r;
        },
        120_000,
        500,
      );
    };
    const placed = await Promise.all(Array.from({ length: n }, (_, i) => place(i)));
    assert.deepEqual(
      placed.map((r) => r.status),
      Array(n).fill(201),
      placed.map((r) => r.text.slice(0, 200)).join("\n"),
    );
    const db = postgres(s.env.DATABASE_URL, { max: 1, onnotice: () => {} });
    try {
      // Both replicas' provisioners, job loops and machine-event consumers run; each service
      // reaches active exactly once, on one machine.
      await eventually(
        async () =>
          (
            await db<{ n: number }[]>`select count(*)::int as n from billing.services
              where customer_id = ${c.customerId} and status = 'active'`
          )[0].n === n,
        120_000,
        250,
      );
      const [m] = await db<{ machines: number; builds: number }[]>`
        select (select count(*)::int from compute.machines where customer_id = ${c.customerId}) as machines,
               (select count(*)::int from compute.jobs where customer_id = ${c.customerId} and action = 'build') as builds`;
      assert.deepEqual(m, { machines: n, builds: n });
      const [money] = await db<{ sum: string; balance: string }[]>`
        select (select sum(amount) from billing.ledger where person_id = ${c.ownerId})::numeric(20,4)::text as sum,
               (select balance from billing.balances where person_id = ${c.ownerId})::numeric(20,4)::text as balance`;
      assert.deepEqual(money, { sum: "800.0000", balance: "800.0000" }, "1000 credit less 20 orders of 10");
    } finally {
      await db.end({ timeout: 5 });
    }
  });

  it("two webhooks replicas never send one delivery twice and keep each partner's order", async () => {
    const port = (receiver.server.address() as { port: number }).port;
    await s.webhooks.updateProgrammeSettings({ addAllowedDestinations: [`127.0.0.1:${port}`] });
    const partners: string[] = [];
    for (let p = 0; p < 4; p++) {
      const { customer } = await s.auth.createCustomer({
        name: `P${p}`,
        email: `${newId()}@example.test`,
        currency: "EUR",
      });
      await s.auth.createPartner({ customerId: customer!.id, status: PartnerStatus.ACTIVE });
      await s.webhooks.setWebhookUrl({ partnerId: customer!.id, url: `http://127.0.0.1:${port}/${p}` });
      partners.push(customer!.id);
    }
    const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
    const js = jetstream(nc);
    const perPartner = 150;
    // Interleaved across partners, in order within each, in bursts so both replicas' consumers
    // and passes take part.
    for (let i = 0; i < perPartner; i++) {
      await Promise.all(
        partners.map((partnerId) => publishServiceEvent(js, s.env.HB_NS, partnerId, { hostname: `h-${i}` })),
      );
    }
    await nc.close();

    await eventually(
      async () => partners.every((_, p) => (receiver.got.get(`/${p}`)?.length ?? 0) >= perPartner),
      120_000,
      200,
    ).catch(() => {
      assert.fail(
        `not all delivered: ${partners.map((_, p) => receiver.got.get(`/${p}`)?.length ?? 0).join(", ")}`,
      );
    });
    // Every delivery recorded as done, so a second sending of any would have arrived by now.
    const db = postgres(s.env.DATABASE_URL, { max: 1, onnotice: () => {} });
    try {
      await eventually(
        async () =>
          (
            await db`select 1 from webhooks.deliveries where status <> 'delivered'
              union all select 1 from webhooks.partner_queues where holder is not null limit 1`
          ).length === 0,
        60_000,
        200,
      );
    } finally {
      await db.end({ timeout: 5 });
    }
    for (let p = 0; p < partners.length; p++) {
      const got = receiver.got.get(`/${p}`) ?? [];
      assert.equal(new Set(got.map((g) => g.id)).size, got.length, `partner ${p}: a delivery was sent twice`);
      assert.deepEqual(
        got.map((g) => g.seq),
        Array.from({ length: perPartner }, (_, i) => i),
        `partner ${p}: deliveries out of order`,
      );
    }
  });
});
