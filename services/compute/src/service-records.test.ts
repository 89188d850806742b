import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { BillingCycle, ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import {
  CancellationSchema,
  CancellationType,
  type ServiceSummary,
  ServiceSummarySchema,
} from "@hb/contracts/hb/billing/v1/services_pb";
import { ListMachineRecordsResponseSchema } from "@hb/contracts/hb/compute/v1/compute_pb";
import { MachineSummarySchema } from "@hb/contracts/hb/compute/v1/machines_pb";
import { type Event, EventSchema } from "@hb/contracts/hb/events/v1/events_pb";
import { newId, type Sql } from "@hb/platform";
import fc from "fast-check";
import type { Handlers } from "./context.ts";
import {
  applyServiceRecords,
  createServiceRecords,
  machineRecordOf,
  SERVICE_RECORD_EVENT,
} from "./service-records.ts";
import { migratedSchema, type TestSchema } from "./test-schema.ts";

const ctx = {} as HandlerContext;

const summary = (id: string, customerId: string, status: ServiceStatus, amount: string, createdMs: number) =>
  create(ServiceSummarySchema, {
    id,
    customerId,
    name: "S",
    hostname: "h",
    kind: ProductKind.VPS,
    status,
    product: { id: newId(), name: "P" },
    billing: {
      cycle: BillingCycle.MONTHLY,
      price: { currency: "EUR", amount },
      nextDueDate: timestampFromMs(createdMs),
    },
    createdAt: timestampFromMs(createdMs),
  });

const event = (s: ServiceSummary, id = newId()): Event =>
  create(EventSchema, {
    id,
    type: SERVICE_RECORD_EVENT,
    occurredAt: timestampFromMs(Date.now()),
    payload: { case: "serviceRecord", value: { service: s } },
  });

describe("a machine record carrying billing's stored record", () => {
  it("reads back, through the wire, as the record that was stored and the machine beside it", () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string({ maxLength: 300 }),
        fc.integer({ min: 0, max: 2 ** 40 }),
        (name, reason, ms) => {
          const s = summary(newId(), newId(), ServiceStatus.ACTIVE, "5.0000", ms);
          s.name = name;
          s.cancellation = create(CancellationSchema, {
            type: CancellationType.END_OF_TERM,
            reason,
            requestedAt: timestampFromMs(ms),
            effectiveAt: timestampFromMs(ms),
          });
          const machine = create(MachineSummarySchema, { serviceId: s.id, hostname: "m" });
          const wire = toBinary(
            ListMachineRecordsResponseSchema,
            create(ListMachineRecordsResponseSchema, {
              records: [machineRecordOf(toBinary(ServiceSummarySchema, s), machine)],
              total: 1,
            }),
          );
          const [r] = fromBinary(ListMachineRecordsResponseSchema, wire).records;
          assert.deepEqual(r.service, s);
          assert.equal(r.machine?.hostname, "m");
          assert.equal(r.$unknown, undefined, "nothing is left over on the reading side");
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe("compute's copy of the service records", () => {
  let db: TestSchema | undefined;
  let sql: Sql;
  let handlers: Handlers;
  before(async () => {
    db = await migratedSchema("records");
    sql = db.sql;
    handlers = createServiceRecords(sql);
  });
  after(() => db?.drop());

  it("keeps each service's newest record whatever the order and batches its events arrive in, twice over", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 12 }),
        fc.func(fc.integer()),
        fc.array(fc.nat({ max: 24 }), { maxLength: 4 }),
        async (owners, order, cuts) => {
          const customerId = newId();
          const services = [newId(), newId(), newId()];
          // Billing's events in the order it wrote them: the ids grow, and the amount counts them.
          const written = owners.map((i, n) =>
            event(summary(services[i], customerId, ServiceStatus.ACTIVE, `${n}.0000`, 1_700_000_000_000 + i)),
          );
          // Each arrives twice (hand-over and stream), in any order, in any batches.
          const arrivals = [...written, ...written]
            .map((e, i) => ({ e, k: order(i) }))
            .sort((a, b) => a.k - b.k)
            .map((a) => a.e);
          const bounds = [...new Set([0, ...cuts.filter((c) => c < arrivals.length), arrivals.length])].sort(
            (a, b) => a - b,
          );
          for (let i = 1; i < bounds.length; i++)
            await applyServiceRecords(sql, arrivals.slice(bounds[i - 1], bounds[i]), "stream");
          const newest = new Map<string, string>();
          for (const [n, i] of owners.entries()) newest.set(services[i], `${n}.0000`);
          const page = await handlers.listMachineRecords!(
            { caller: { customerId }, kind: ProductKind.VPS, page: 1, limit: 50 } as never,
            ctx,
          );
          const wire = toBinary(
            ListMachineRecordsResponseSchema,
            create(ListMachineRecordsResponseSchema, page),
          );
          const shown = new Map(
            fromBinary(ListMachineRecordsResponseSchema, wire).records.map((r) => [
              r.service!.id,
              r.service!.billing!.price!.amount,
            ]),
          );
          assert.deepEqual(shown, newest);
          assert.equal(page.total, newest.size);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("drops a record without valid ids and applies the rest of its batch", async () => {
    const customerId = newId();
    const kept = summary(newId(), customerId, ServiceStatus.ACTIVE, "1.0000", 0);
    const good = event(kept);
    const bad = event(summary("not-a-uuid", customerId, ServiceStatus.ACTIVE, "1.0000", 0));
    assert.equal(await applyServiceRecords(sql, [bad, good], "rpc"), 1);
    const { record } = await handlers.getMachineRecord!(
      { caller: { customerId }, serviceId: kept.id, kind: ProductKind.VPS } as never,
      ctx,
    );
    assert.ok(record);
  });
});
