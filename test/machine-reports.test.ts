import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { EventSchema } from "@hb/contracts/hb/events/v1/events_pb";
import { createLogger, ensureDatabase, migrate, newId } from "@hb/platform";
import fc from "fast-check";
import postgres from "postgres";
import {
  applyMachineEvents,
  type MachineReport,
  machineReport,
} from "../services/billing/src/provisioning.ts";

// Compute's build reports reach billing in batches (one transaction per batch, issue 13). Whatever
// the batches, the outcome must be that of applying the reports one at a time, in order: each
// event once, a service only while it is installing or pending, one service event per change.

const STATUSES = ["installing", "pending", "active", "pending_payment"] as const;
type Status = (typeof STATUSES)[number] | "provisioning_failed";

interface ModelService {
  status: Status;
  server_ip: string;
  hostname: string;
  failure_reason: string | null;
}

/** The reference: one report at a time, as the consumer applied them before batching. */
function applyOneByOne(services: ModelService[], reports: (MachineReport & { service: number })[]) {
  const seen = new Set<string>();
  const events: string[][] = services.map(() => []);
  for (const r of reports) {
    if (seen.has(r.eventId)) continue;
    seen.add(r.eventId);
    const s = services[r.service];
    if (s.status !== "installing" && s.status !== "pending") continue;
    s.status = r.success ? "active" : "provisioning_failed";
    s.server_ip = r.serverIp;
    s.hostname = r.hostname || s.hostname;
    s.failure_reason = r.success ? null : r.error || "provisioning failed";
    events[r.service].push(r.success ? "service.provisioned" : "service.provisioning_failed");
  }
  return events;
}

describe("compute's build reports in billing", () => {
  const base = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const url = new URL(base);
  url.pathname = `/hb_reports_${Date.now().toString(36)}${process.pid.toString(36)}`;
  let sql: postgres.Sql;
  let productId: string;

  before(async () => {
    await ensureDatabase(url.toString());
    sql = postgres(url.toString(), {
      max: 3,
      onnotice: () => {},
      connection: { search_path: "billing" },
      types: {},
    });
    await migrate(
      sql,
      "billing",
      path.join(import.meta.dirname, "../services/billing/src/db/migrations"),
      createLogger("test"),
    );
    productId = newId();
    await sql`insert into products (id, name, kind) values (${productId}, 'Reports', 'game')`;
  });
  after(async () => {
    await sql?.end();
    const admin = postgres(base, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists "${url.pathname.slice(1)}" with (force)`);
    await admin.end();
  });

  const report = fc.record({
    event: fc.nat({ max: 7 }), // a small range, so that some reports repeat an event (redelivery)
    service: fc.nat({ max: 3 }),
    success: fc.boolean(),
    ip: fc.constantFrom("10.0.0.1", "10.0.0.2"),
    hostname: fc.constantFrom("", "built"),
    error: fc.constantFrom("", "disk full"),
  });

  it("applied in any batches, they leave the services and events of one report at a time", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...STATUSES), { minLength: 4, maxLength: 4 }),
        fc.array(report, { maxLength: 12 }),
        fc.array(fc.nat({ max: 12 }), { maxLength: 4 }),
        async (initial, drawn, cuts) => {
          await sql`truncate outbox`;
          const ids = initial.map(() => newId());
          await sql`insert into services (id, customer_id, product_id, kind, name, hostname, status, cycle, amount, currency, next_due_date)
            select unnest(${ids}::uuid[]), ${newId()}, ${productId}, 'game', 'S', 'before',
              unnest(${initial}::text[]), 'monthly', 1, 'EUR', now()`;
          const eventIds = Array.from({ length: 8 }, () => newId());
          const reports = drawn.map((d) => ({
            service: d.service,
            eventId: eventIds[d.event],
            serviceId: ids[d.service],
            success: d.success,
            serverIp: d.ip,
            hostname: d.hostname,
            error: d.error,
          }));
          const bounds = [...new Set([0, ...cuts.filter((c) => c < reports.length), reports.length])].sort(
            (a, b) => a - b,
          );
          for (let i = 1; i < bounds.length; i++)
            await applyMachineEvents(sql, "t", reports.slice(bounds[i - 1], bounds[i]));

          const model: ModelService[] = initial.map((status) => ({
            status,
            server_ip: "",
            hostname: "before",
            failure_reason: null,
          }));
          const expectedEvents = applyOneByOne(model, reports);
          const rows = await sql<(ModelService & { id: string })[]>`
            select id, status, server_ip, hostname, failure_reason from services where id = any(${ids}::uuid[])`;
          const byId = new Map(rows.map(({ id, ...rest }) => [id, rest]));
          assert.deepEqual(
            ids.map((id) => byId.get(id)),
            model,
          );
          const outbox = await sql<{ payload: Buffer }[]>`select payload from outbox order by created_at, id`;
          const events: string[][] = ids.map(() => []);
          for (const { payload } of outbox) {
            const e = fromBinary(EventSchema, payload);
            assert.equal(e.payload.case, "service");
            const i = ids.indexOf(e.payload.case === "service" ? e.payload.value.serviceId : "");
            events[i].push(e.type);
          }
          assert.deepEqual(events, expectedEvents);
        },
      ),
      { seed: 20_261_124, numRuns: 60 },
    );
  });

  it("reads a machine event's report and refuses what is not one", () => {
    const serviceId = newId();
    const event = create(EventSchema, {
      id: newId(),
      type: "machine.provisioned",
      payload: {
        case: "machine",
        value: { serviceId, success: true, serverIp: "10.1.2.3", hostname: "h" },
      },
    });
    assert.deepEqual(machineReport(toBinary(EventSchema, event)), {
      eventId: event.id,
      serviceId,
      success: true,
      serverIp: "10.1.2.3",
      hostname: "h",
      error: "",
    });
    assert.equal(machineReport(new Uint8Array([0xff, 0xff, 0xff])), undefined);
    const other = create(EventSchema, { id: newId(), type: "service.suspended" });
    assert.equal(machineReport(toBinary(EventSchema, other)), undefined);
    const badId = create(EventSchema, { ...event, id: "not-a-uuid" });
    assert.equal(machineReport(toBinary(EventSchema, badId)), undefined);
  });
});
