/**
 * Two webhooks delivery loops in this process (two replicas' worth) over the shared stack's real
 * PostgreSQL, each leasing partners' queues (services/webhooks/src/pass.ts), sending to a real
 * receiver on loopback. Auth is a stand-in that vouches only for this file's partners, so neither
 * these loops nor the stack's own webhooks service ever sends anyone else's deliveries.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import type { Client } from "@connectrpc/connect";
import type { PartnerLookupService } from "@hb/contracts/hb/auth/v1/partner_lookup_pb";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { WebhooksStaffService } from "@hb/contracts/hb/webhooks/v1/webhooks_staff_pb";
import { connectDb, createLogger, newId } from "@hb/platform";
import { serviceDbUrl } from "../scripts/db-roles.ts";
import { type PassOptions, startPassLoop } from "../services/webhooks/src/pass.ts";
import { eventually, grpc } from "./helpers.ts";

const sql = connectDb(serviceDbUrl(process.env.DATABASE_URL!, "webhooks"), "webhooks", 4);
const log = createLogger("webhooks-test", "error");
const ours = new Set<string>();
const SECRET = "whsec_partner_lease_test";

// The stand-in for auth's partner lookup: this file's partners are active with a secret, every
// other partner is unknown (its queue is left alone, as for a partner auth does not know).
const auth = {
  getPartnerForDelivery: async (req: { customerIds: string[] }) => ({
    partners: req.customerIds
      .filter((id) => ours.has(id))
      .map((customerId) => ({ customerId, status: PartnerStatus.ACTIVE, signingSecret: SECRET })),
  }),
} as unknown as Client<typeof PartnerLookupService>; // only the one method the loop calls

const opts = (timeoutMs: number): PassOptions => ({ timeoutMs, perPartner: 10, concurrency: 32 });

interface Arrival {
  id: string;
  seq: number;
}

/** A receiver on loopback: arrivals per partner (the URL's path), in the order they came. */
function receiver() {
  const got = new Map<string, Arrival[]>();
  let hang: (partner: string, a: Arrival) => boolean = () => false;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const partner = (req.url ?? "").slice(1);
      const a = {
        id: String(req.headers["x-webhook-id"]),
        seq: JSON.parse(Buffer.concat(chunks).toString()).data.seq,
      };
      got.set(partner, [...(got.get(partner) ?? []), a]);
      if (!hang(partner, a)) res.writeHead(200).end("ok");
    });
  });
  return {
    got,
    hangWhen: (fn: typeof hang) => {
      hang = fn;
    },
    arrived: (partner: string) => got.get(partner) ?? [],
    base: "",
    server,
  };
}

/** A partner with a URL on file and `n` queued deliveries, seq 0..n-1 in queue order. */
async function partnerWith(base: string, n: number) {
  const partnerId = newId();
  ours.add(partnerId);
  await sql`insert into partner_webhooks (partner_id, url) values (${partnerId}, ${`${base}/${partnerId}`})`;
  await sql`with stored as (
      insert into deliveries (id, partner_id, event_id, event, data, created_at)
      select id, ${partnerId}, id, 'webhook.test', jsonb_build_object('seq', i),
        clock_timestamp() - make_interval(secs => (${n} - i) / 1000.0)
      from (select gen_random_uuid() as id, i from generate_series(0, ${n - 1}) as i) s
      returning partner_id)
    insert into partner_queues (partner_id) select distinct partner_id from stored on conflict do nothing`;
  return partnerId;
}

const delivered = async (partnerId: string) =>
  (
    await sql<
      { id: string }[]
    >`select id from deliveries where partner_id = ${partnerId} and status = 'delivered'`
  ).map((r) => r.id);

const seqs = (arrivals: Arrival[]) => arrivals.map((a) => a.seq);

describe("partner queues leased by two replicas", () => {
  const rx = receiver();
  before(async () => {
    await new Promise<void>((r) => rx.server.listen(0, "127.0.0.1", r));
    const { port } = rx.server.address() as { port: number };
    await grpc([WebhooksStaffService], "WEBHOOKS_ADDR").updateProgrammeSettings({
      addAllowedDestinations: [`127.0.0.1:${port}`],
    });
    rx.base = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    rx.server.closeAllConnections();
    rx.server.close();
    await sql.end({ timeout: 5 });
  });

  it("send each partner's deliveries once, in queue order, with both replicas claiming side by side", async () => {
    const partners = await Promise.all(Array.from({ length: 12 }, () => partnerWith(rx.base, 25)));
    const a = startPassLoop(sql, auth, log, 50, opts(5000));
    const b = startPassLoop(sql, auth, log, 50, opts(5000));
    try {
      await eventually(async () => partners.every((p) => rx.arrived(p).length >= 25), 20_000, 50);
      await eventually(async () =>
        (await Promise.all(partners.map(delivered))).every((d) => d.length === 25),
      );
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    for (const p of partners)
      assert.deepEqual(
        seqs(rx.arrived(p)),
        Array.from({ length: 25 }, (_, i) => i),
        `partner ${p}`,
      );
  });

  it("a partner whose endpoint never answers delays no other partner", async () => {
    const hanging = await partnerWith(rx.base, 3);
    rx.hangWhen((partner) => partner === hanging);
    const others = await Promise.all(Array.from({ length: 5 }, () => partnerWith(rx.base, 20)));
    const a = startPassLoop(sql, auth, log, 50, opts(30_000));
    try {
      await eventually(async () => rx.arrived(hanging).length === 1, 5000, 20);
      const since = Date.now();
      await eventually(async () => others.every((p) => rx.arrived(p).length === 20), 10_000, 20);
      // Far inside the 30 s the hanging attempt may take: nobody waited for it.
      assert.ok(Date.now() - since < 8000, `others took ${Date.now() - since} ms`);
      assert.equal(rx.arrived(hanging).length, 1, "the hanging partner's queue waits behind its first");
    } finally {
      rx.hangWhen(() => false);
      rx.server.closeAllConnections();
      await a.stop();
    }
  });

  it("a replica stalled mid-queue loses the partner once its lease runs out; nothing recorded delivered is sent again", async () => {
    const partnerId = await partnerWith(rx.base, 30);
    // Replica A stalls at seq 12: its attempt never ends, and it holds the lease unrenewed.
    rx.hangWhen(
      (partner, arrival) => partner === partnerId && arrival.seq === 12 && rx.arrived(partner).length === 13,
    );
    const a = startPassLoop(sql, auth, log, 50, opts(60_000));
    let b: ReturnType<typeof startPassLoop> | undefined;
    try {
      await eventually(async () => rx.arrived(partnerId).length === 13, 10_000, 20);
      // B runs beside the stalled A and must keep off while A's lease holds.
      b = startPassLoop(sql, auth, log, 50, opts(60_000));
      const replicaB = b;
      await eventually(async () => replicaB.claims() >= 3, 10_000, 20); // B tried, and found the lease held
      assert.equal(rx.arrived(partnerId).length, 13, "nothing is sent while another replica holds the lease");
      const recorded = new Set(await delivered(partnerId));
      assert.ok(recorded.size >= 10, `A recorded its deliveries as it went (${recorded.size})`);
      // The lease runs out (its expiry moved to now, in place of waiting the 75 s it holds).
      await sql`update partner_queues set lease_until = clock_timestamp() - interval '1 ms' where partner_id = ${partnerId}`;
      await eventually(async () => (await delivered(partnerId)).length === 30, 10_000, 20);
      const arrivals = rx.arrived(partnerId);
      const twice = arrivals.filter((x, i) => arrivals.findIndex((y) => y.id === x.id) !== i);
      assert.deepEqual(
        twice.filter((x) => recorded.has(x.id)),
        [],
        "a delivery recorded delivered was sent again",
      );
      assert.ok(
        twice.some((x) => x.seq === 12),
        "B sent the delivery A never saw answered",
      );
      // B resumed where A's record ended and kept the queue's order from there.
      const fromB = seqs(arrivals.slice(13));
      assert.deepEqual(
        fromB,
        Array.from({ length: 30 - fromB[0] }, (_, i) => fromB[0] + i),
      );
      // A comes back (its attempt ends): it records nothing over B's outcome and sends nothing more.
      rx.hangWhen(() => false);
      rx.server.closeAllConnections();
      await a.stop();
      assert.equal((await delivered(partnerId)).length, 30, "A's late failure did not undo B's delivery");
      assert.equal(rx.arrived(partnerId).length, arrivals.length);
    } finally {
      rx.hangWhen(() => false);
      rx.server.closeAllConnections();
      await Promise.all([a.stop(), b?.stop()]);
    }
  });
});
