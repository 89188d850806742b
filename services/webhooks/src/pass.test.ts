/**
 * The webhooks delivery loop at rest, against the real PostgreSQL in a schema of its own (the
 * service's migrations applied to it), so that no other test's deliveries are due in it.
 */
import assert from "node:assert/strict";
import http from "node:http";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { Client } from "@connectrpc/connect";
import type { PartnerLookupService } from "@hb/contracts/hb/auth/v1/partner_lookup_pb";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { connectDb, createLogger, migrate, newId, type Sql } from "@hb/platform";
import { eventually } from "../../../test/support/eventually.ts";
import { startPassLoop } from "./pass.ts";

const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const schema = `webhooks_pass_test_${process.pid}${Date.now().toString(36)}`;
const log = createLogger("webhooks-pass-test", "error");
const SECRET = "whsec_pass_test";

// Auth's partner lookup, standing in: every partner asked about is active with a secret.
const auth = {
  getPartnerForDelivery: async (req: { customerIds: string[] }) => ({
    partners: req.customerIds.map((customerId) => ({
      customerId,
      status: PartnerStatus.ACTIVE,
      signingSecret: SECRET,
    })),
  }),
} as unknown as Client<typeof PartnerLookupService>; // only the one method the loop calls

describe("the delivery loop at rest", () => {
  let sql: Sql;
  const arrived: string[] = [];
  const server = http.createServer((req, res) => {
    arrived.push(String(req.headers["x-webhook-id"]));
    req.resume().on("end", () => res.writeHead(200).end("ok"));
  });
  let base = "";

  before(async () => {
    sql = connectDb(url, schema, 2);
    await migrate(sql, schema, path.join(import.meta.dirname, "db/migrations"), log);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as { port: number };
    base = `http://127.0.0.1:${port}`;
    await sql`update programme_settings set allowed_destinations = ${[`127.0.0.1:${port}`]}`;
  });
  after(async () => {
    server.closeAllConnections();
    server.close();
    await sql?.unsafe(`drop schema if exists "${schema}" cascade`);
    await sql?.end({ timeout: 5 });
  });

  it("asks JetStream for the ack floor only while a delivery is due, and sends one made due while it rests", async () => {
    let floorReads = 0;
    const storedThrough = async () => {
      floorReads++;
      return 0;
    };
    const loop = startPassLoop(sql, auth, log, 30, {
      timeoutMs: 2000,
      perPartner: 10,
      concurrency: 4,
      storedThrough,
    });
    try {
      // Past its first passes, the loop at rest: ten passes in which nothing was due.
      await eventually(async () => loop.claims() >= 3, 10_000, 10);
      const readsBefore = floorReads;
      const passesBefore = loop.claims();
      await eventually(async () => loop.claims() >= passesBefore + 10, 10_000, 10);
      assert.equal(floorReads, readsBefore, "no pass read the ack floor while nothing was due");

      // A delivery made due while the loop rests (a test event: no stream position to wait for),
      // as a retry's back-off running out or another replica's lease running out makes one.
      const partnerId = newId();
      const id = newId();
      await sql`insert into partner_webhooks (partner_id, url) values (${partnerId}, ${`${base}/hook`})`;
      await sql`insert into partner_queues (partner_id) values (${partnerId})`;
      await sql`insert into deliveries (id, partner_id, event_id, event, data)
        values (${id}, ${partnerId}, ${id}, 'webhook.test', '{}'::jsonb)`;
      await eventually(async () => arrived.includes(id), 10_000, 10);
      assert.ok(floorReads > readsBefore, "the pass that found it due read the floor");
      await eventually(
        async () =>
          (await sql<{ status: string }[]>`select status from deliveries where id = ${id}`)[0]?.status ===
          "delivered",
        10_000,
        10,
      );
    } finally {
      await loop.stop();
    }
  });
});
