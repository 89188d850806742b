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
  machinePageVersion,
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

describe("the version of a customer's machine pages", () => {
  let db: TestSchema | undefined;
  let sql: Sql;
  let handlers: Handlers;
  before(async () => {
    db = await migratedSchema("page_versions", 3);
    sql = db.sql;
    handlers = createServiceRecords(sql);
  });
  after(() => db?.drop());

  /** A customer with one service: billing's record, its machine and one address. */
  async function customerWithMachine() {
    const customerId = newId();
    const s = summary(newId(), customerId, ServiceStatus.ACTIVE, "1.0000", 1_700_000_000_000);
    const older = newId();
    await applyServiceRecords(sql, [event(s)], "rpc");
    await sql`insert into machines (service_id, customer_id, kind, hostname, state)
              values (${s.id}, ${customerId}, 'vps', 'h', 'running')`;
    await sql`insert into ip_addresses (service_id, address, version, prefix_length, purpose)
              values (${s.id}, '198.18.0.1', 4, 32, 'primary')`;
    return { customerId, s, older };
  }

  type Step = {
    op: "record" | "stale" | "same" | "rename" | "add" | "remove" | "read";
    who: number;
    undo: boolean;
  };
  const steps = fc.array(
    fc.record({
      op: fc.constantFrom("record", "stale", "same", "rename", "add", "remove", "read"),
      who: fc.integer({ min: 0, max: 1 }),
      undo: fc.boolean(),
    }) as fc.Arbitrary<Step>,
    { minLength: 1, maxLength: 24 },
  );

  it("changes with every committed change a page shows, for that customer only, and with nothing else", async () => {
    await fc.assert(
      fc.asyncProperty(steps, async (plan) => {
        const cs = [await customerWithMachine(), await customerWithMachine()];
        // Two change rows are compacted by the next read: compaction runs all through the plan.
        const versionOf = (i: number) => machinePageVersion(sql, cs[i].customerId, 2);
        let n = 0;
        for (const step of plan) {
          const c = cs[step.who];
          const before = await Promise.all([versionOf(0), versionOf(1)]);
          let changes = true;
          const write = async (tx: Sql) => {
            n++;
            switch (step.op) {
              case "record":
                await applyServiceRecords(
                  tx,
                  [event(summary(c.s.id, c.customerId, ServiceStatus.ACTIVE, `${n}.0000`, 0))],
                  "rpc",
                );
                break;
              case "stale":
                changes = false;
                await applyServiceRecords(
                  tx,
                  [event(summary(c.s.id, c.customerId, ServiceStatus.ACTIVE, "9.0000", 0), c.older)],
                  "rpc",
                );
                break;
              case "same":
                changes = false;
                await tx`update machines set hostname = hostname where service_id = ${c.s.id}`;
                break;
              case "rename":
                await tx`update machines set hostname = ${`h${n}`} where service_id = ${c.s.id}`;
                break;
              case "add":
                await tx`insert into ip_addresses (service_id, address, version, prefix_length, purpose)
                         values (${c.s.id}, ${`198.18.1.${n}`}, 4, 32, 'additional')`;
                break;
              case "remove": {
                const gone = await tx`delete from ip_addresses where service_id = ${c.s.id}
                  and address = (select max(address) from ip_addresses where service_id = ${c.s.id})`;
                changes = gone.count > 0;
                break;
              }
              case "read":
                changes = false;
                await versionOf(step.who);
            }
            if (step.undo) throw new Error("rolled back");
          };
          await sql
            .begin((tx) => write(tx as unknown as Sql))
            .catch((e: Error) => {
              if (e.message !== "rolled back") throw e;
              changes = false;
            });
          const after = await Promise.all([versionOf(0), versionOf(1)]);
          const label = `${JSON.stringify(step)} in ${JSON.stringify(plan)}`;
          if (changes) assert.notEqual(after[step.who], before[step.who], label);
          else assert.equal(after[step.who], before[step.who], label);
          assert.equal(after[1 - step.who], before[1 - step.who], label);
        }
      }),
      { numRuns: 25 },
    );
  });

  it("counts a change that commits after a compaction which could not see it", async () => {
    const { customerId, s } = await customerWithMachine();
    for (let i = 0; i < 3; i++)
      await sql`update machines set hostname = ${`h${i}`} where service_id = ${s.id}`;
    let seen = "";
    await sql.begin(async (tx) => {
      await tx`update machines set hostname = 'late' where service_id = ${s.id}`;
      // Another connection reads (and compacts) while the change is not committed.
      seen = await machinePageVersion(sql, customerId, 0);
    });
    assert.notEqual(await machinePageVersion(sql, customerId, 0), seen);
  });

  it("answers a page unchanged, without records, to a caller holding it at the current version", async () => {
    const { customerId } = await customerWithMachine();
    const ask = async (knownVersion?: string) =>
      fromBinary(
        ListMachineRecordsResponseSchema,
        toBinary(
          ListMachineRecordsResponseSchema,
          create(
            ListMachineRecordsResponseSchema,
            await handlers.listMachineRecords!(
              { caller: { customerId }, kind: ProductKind.VPS, page: 1, limit: 50, knownVersion } as never,
              ctx,
            ),
          ),
        ),
      );
    const first = await ask();
    assert.equal(first.unchanged, false);
    assert.equal(first.records.length, 1);
    const again = await ask(first.version);
    assert.equal(again.unchanged, true);
    assert.equal(again.version, first.version);
    assert.equal(again.records.length, 0);
    const stale = await ask(String(BigInt(first.version) - 1n));
    assert.equal(stale.unchanged, false);
    assert.equal(stale.total, 1);
  });
});
