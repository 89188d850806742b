import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { WebhooksStaffService } from "@hb/contracts/hb/webhooks/v1/webhooks_staff_pb";
import { newId } from "@hb/platform";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { adminEntry } from "../scripts/bundle-file.ts";
import { eventually } from "./helpers.ts";
import type { OwnStack } from "./own-stack.ts";
import { stackClient } from "./support/clients.ts";
import { faultStack } from "./support/fault-stack.ts";
import { serviceSql } from "./support/service-db.ts";
import { publishServiceEvent, serviceEventReceiver } from "./support/service-events.ts";

// Kills the webhooks service mid-burst: every event still reaches the receiver at least once, and
// a duplicate always carries the same X-Webhook-Id. Runs on the fault suites' supervised stack
// (test/faults.test.ts), whose launcher leaves a deliberate restart() alone.
describe("webhook delivery survives a crash", () => {
  let s: OwnStack;
  const receiver = serviceEventReceiver();
  const { seen, received } = receiver; // serviceId → X-Webhook-Ids; every X-Webhook-Id, once per arrival

  before(async () => {
    s = await faultStack();
    await receiver.listen();
  });
  after(() => receiver.close());

  /** `npm run admin -- webhooks settings set <flags>` against this stack; its JSON answer. */
  const adminSettings = async (...flags: string[]) => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [adminEntry(), "webhooks", "settings", "set", ...flags],
      { env: { ...process.env, WEBHOOKS_ADDR: s.stack.env.WEBHOOKS_ADDR } },
    );
    return JSON.parse(stdout) as { settings: { allowedDestinations?: string[] } };
  };
  const receiverPort = receiver.port;

  it("SIGKILL of the webhooks service in the middle of a burst loses nothing", async () => {
    const { customer } = await s.auth.createCustomer({ name: "P", email: "p@example.test", currency: "EUR" });
    const partnerId = customer!.id;
    await s.auth.createPartner({ customerId: partnerId, status: PartnerStatus.ACTIVE });
    const { settings } = await adminSettings("--allow-destination", `127.0.0.1:${receiverPort()}`);
    assert.deepEqual(settings.allowedDestinations, [`127.0.0.1:${receiverPort()}`]);
    const webhooks = stackClient(s.stack.env, [WebhooksService, WebhooksStaffService], "WEBHOOKS_ADDR", 5000);
    await webhooks.client.setWebhookUrl({ partnerId, url: `http://127.0.0.1:${receiverPort()}/` });
    webhooks.close();

    const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
    const js = jetstream(nc);
    const ns = s.stack.env.HB_NS;
    const ids: string[] = [];
    const burst = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const serviceId = newId();
        ids.push(serviceId);
        await publishServiceEvent(js, ns, partnerId, { serviceId });
      }
    };
    await burst(150);
    await s.stack.restart("webhooks", "SIGKILL");
    await burst(150);
    await s.stack.restart("webhooks", "SIGKILL");
    await nc.close();

    await eventually(async () => ids.every((id) => seen.has(id)), 60_000, 200);
    for (const id of ids) assert.equal(seen.get(id)!.size, 1, "a duplicate carries the same X-Webhook-Id");
  });

  it("a database write failing part-way through a partner's queue does not send its delivered events again", async () => {
    const { customer } = await s.auth.createCustomer({ name: "Q", email: "q@example.test", currency: "EUR" });
    const partnerId = customer!.id;
    await s.auth.createPartner({ customerId: partnerId, status: PartnerStatus.ACTIVE });
    await adminSettings("--allow-destination", `127.0.0.1:${receiverPort()}`);
    const webhooks = stackClient(s.stack.env, [WebhooksService, WebhooksStaffService], "WEBHOOKS_ADDR", 5000);
    await webhooks.client.setWebhookUrl({ partnerId, url: `http://127.0.0.1:${receiverPort()}/q` });
    webhooks.close();
    const db = serviceSql("webhooks", s.stack.env.DATABASE_URL);
    try {
      // The first statement that records deliveries as delivered fails (a sequence, not a row, counts
      // it: the failed statement's own writes are rolled back).
      await db.unsafe(`
        create sequence webhooks.record_failures;
        create function webhooks.fail_first_record() returns trigger language plpgsql as $$
        begin
          if exists (select 1 from recorded where status = 'delivered')
             and nextval('webhooks.record_failures') = 1 then
            raise exception 'simulated failure of the statement recording deliveries';
          end if;
          return null;
        end $$;
        create trigger fail_first_record after update on webhooks.deliveries
          referencing new table as recorded for each statement execute function webhooks.fail_first_record();`);
      const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
      const js = jetstream(nc);
      const eventIds: string[] = [];
      for (let i = 0; i < 30; i++) eventIds.push(await publishServiceEvent(js, s.stack.env.HB_NS, partnerId));
      await nc.close();
      // Every delivery recorded, so one put back unrecorded would have been sent again by now.
      await eventually(
        async () =>
          (
            await db`select count(*)::int as n from webhooks.deliveries
              where partner_id = ${partnerId} and status = 'delivered'`
          )[0].n === eventIds.length,
        60_000,
        100,
      );
      const [{ is_called }] = await db`select is_called from webhooks.record_failures`;
      assert.equal(is_called, true, "a statement recording deliveries failed once");
      const arrivals = new Map<string, number>();
      for (const id of received) arrivals.set(id, (arrivals.get(id) ?? 0) + 1);
      assert.deepEqual(
        eventIds.filter((id) => arrivals.get(id) !== 1).map((id) => [id, arrivals.get(id) ?? 0]),
        [],
        "each event arrived exactly once",
      );
    } finally {
      await db.unsafe(`drop trigger if exists fail_first_record on webhooks.deliveries;
        drop function if exists webhooks.fail_first_record(); drop sequence if exists webhooks.record_failures;`);
      await db.end({ timeout: 5 });
    }
  });

  it("removes delivery records and reseller request logs older than 30 days (at start, then hourly), keeps younger ones", async () => {
    // Each service's rows aged as that service's own role.
    const db = serviceSql("webhooks", s.stack.env.DATABASE_URL);
    const authDb = serviceSql("auth", s.stack.env.DATABASE_URL);
    try {
      const partnerId = newId();
      const oldId = newId();
      const youngId = newId();
      for (const [id, days] of [
        [oldId, 31],
        [youngId, 29],
      ] as const) {
        await db`
          insert into webhooks.deliveries (id, partner_id, event_id, event, data, status, attempts, created_at)
          values (${id}, ${partnerId}, ${newId()}, 'webhook.test', '{}'::jsonb, 'delivered', 1,
                  now() - make_interval(days => ${days}))`;
      }
      // Reseller request logs live in auth's request log, purged on the same 30-day rule.
      const logged = await authDb`
        insert into auth.request_log (key_id, customer_id, method, endpoint, status_code, source_ip, duration_ms, at)
        values (${newId()}, ${partnerId}, 'GET', '/api/v1/reseller/services', 200, '127.0.0.1', 3, now() - interval '31 days'),
               (${newId()}, ${partnerId}, 'GET', '/api/v1/reseller/services', 200, '127.0.0.1', 3, now() - interval '29 days')
        returning id`;
      await s.stack.restart("webhooks", "SIGTERM");
      await s.stack.restart("auth", "SIGTERM");
      await eventually(
        async () => (await db`select 1 from webhooks.deliveries where id = ${oldId}`).length === 0,
        20_000,
        200,
      );
      assert.equal((await db`select 1 from webhooks.deliveries where id = ${youngId}`).length, 1);
      await eventually(
        async () => (await authDb`select 1 from auth.request_log where id = ${logged[0].id}`).length === 0,
        20_000,
        200,
      );
      assert.equal((await authDb`select 1 from auth.request_log where id = ${logged[1].id}`).length, 1);
    } finally {
      await db.end({ timeout: 5 });
      await authDb.end({ timeout: 5 });
    }
  });

  it("the admin command adds, removes and clears allowed destinations, normalising each entry", async () => {
    const added = await adminSettings("--allow-destination", "LocalHost.:4567,[0:0::1]:8443,127.0.0.1:9");
    assert.deepEqual(
      added.settings.allowedDestinations,
      [`127.0.0.1:${receiverPort()}`, "127.0.0.1:9", "[::1]:8443", "localhost:4567"].sort(),
    );
    const removed = await adminSettings("--remove-destination", "localhost:4567");
    assert.ok(!removed.settings.allowedDestinations!.includes("localhost:4567"));
    assert.equal(removed.settings.allowedDestinations!.length, 3);
    const cleared = await adminSettings("--clear-allowed-destinations", "--allow-destination", "127.0.0.1:9");
    assert.deepEqual(cleared.settings.allowedDestinations, ["127.0.0.1:9"]);
    await assert.rejects(adminSettings("--allow-destination", "127.0.0.1"), /is not host:port/);
  });
});
