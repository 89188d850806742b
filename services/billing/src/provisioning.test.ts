import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { type Event, EventSchema } from "@hb/contracts/hb/events/v1/events_pb";
import { createLogger, type Sql } from "@hb/platform";
import { eventually } from "../../../test/support/eventually.ts";
import {
  type ProvisionItem,
  provisioningHandOver,
  provisionRetryDelay,
  startProvisioner,
} from "./provisioning.ts";

describe("provisioning retry back-off", () => {
  it("doubles from the base after each failure", () => {
    assert.deepEqual(
      [1, 2, 3, 4].map((n) => provisionRetryDelay(n, 300)),
      [300, 600, 1200, 2400],
    );
  });
  it("never waits longer than the cap, however many failures", () => {
    assert.equal(provisionRetryDelay(50, 300), 60_000);
    assert.equal(provisionRetryDelay(1_000_000, 300, 5_000), 5_000);
  });
});

describe("an order call's hand-over to compute (records and builds in one call)", () => {
  type Call = { records: string[]; services: string[] };
  const item = (id: string): ProvisionItem => ({
    id,
    customer_id: id,
    kind: "vps",
    product_id: id,
    hostname: `h-${id}`,
    os_image_id: "",
    vcpus: 1,
    memory_mb: 1024,
    disk_gb: 20,
    location: "",
  });
  const event = (id: string) => create(EventSchema, { id, type: "service.record_changed" });
  const quiet = createLogger("test", "error");
  // Refuses every build: nothing is marked installing, so no database is needed here.
  function fakeCompute(fail = false) {
    const calls: Call[] = [];
    const applied: string[][] = [];
    let release: () => void = () => {};
    let gate = Promise.resolve();
    const compute = {
      async provisionBatch(req: { requests: { serviceId: string }[]; records: Event[] }) {
        calls.push({
          records: (req.records ?? []).map((e) => e.id),
          services: req.requests.map((r) => r.serviceId),
        });
        await gate;
        if (fail) throw new Error("compute unreachable");
        return {
          results: req.requests.map((r) => ({ serviceId: r.serviceId, jobId: "", error: "no capacity" })),
        };
      },
      async applyServiceRecords(req: { events: Event[] }) {
        applied.push(req.events.map((e) => e.id));
        return {};
      },
      hold() {
        gate = new Promise<void>((r) => {
          release = r;
        });
      },
      release: () => release(),
    };
    return { compute, calls, applied };
  }
  const sqlUnused = (() => {
    throw new Error("no database in this test");
  }) as unknown as Sql;

  it("sends the calls that arrive while one is in flight together in the next, and answers each", async () => {
    const { compute, calls } = fakeCompute();
    const h = provisioningHandOver(sqlUnused, "t", compute as never, quiet);
    compute.hold();
    const a = h.send([event("e1")], [item("s1")]);
    const b = h.send([event("e2")], [item("s2")]);
    const c = h.send([event("e3")], [item("s3"), item("s4")]);
    compute.release();
    await Promise.all([a, b, c]);
    assert.deepEqual(calls, [
      { records: ["e1"], services: ["s1"] },
      { records: ["e2", "e3"], services: ["s2", "s3", "s4"] },
    ]);
  });

  it("keeps claimed services from the provisioner, and leaves to it what compute refused, with back-off", async () => {
    const { compute } = fakeCompute();
    const h = provisioningHandOver(sqlUnused, "t", compute as never, quiet);
    h.claim(["s1"]);
    assert.ok(h.state.claimed.has("s1"));
    await h.send([], [item("s1")]);
    assert.equal(h.state.claimed.has("s1"), false);
    assert.equal(h.state.failing.get("s1")?.failures, 1);
  });

  it("answers when compute cannot be reached, leaving the services to the provisioner", async () => {
    const { compute } = fakeCompute(true);
    const h = provisioningHandOver(sqlUnused, "t", compute as never, quiet);
    h.claim(["s1"]);
    await h.send([event("e1")], [item("s1")]);
    assert.equal(h.state.claimed.has("s1"), false);
    assert.equal(h.state.failing.get("s1")?.failures, 1);
  });

  /**
   * A database whose pending services are `pending()`, read when the pass's query runs; `during`
   * happens while that query is in flight (after the pass listed its claims).
   */
  const pendingDatabase = (pending: () => ProvisionItem[], during: () => void = () => {}) => {
    let reads = 0;
    const sql = Object.assign(
      // The pass's query: pending services but those it lists as waiting (its first parameter).
      (_text: TemplateStringsArray, waiting: string[]) => {
        reads++;
        during();
        return Promise.resolve(pending().filter((s) => !waiting.includes(s.id)));
      },
      { listen: async () => ({ unlisten: async () => {} }) },
    ) as unknown as Sql;
    return { sql, reads: () => reads };
  };

  it("the provisioner leaves to the order a service it claimed while the pass's query was in flight", async () => {
    const { compute, calls } = fakeCompute();
    const h = provisioningHandOver(sqlUnused, "t", compute as never, quiet);
    // The order claims s1 and commits while the pass's query waits for a connection: the query
    // then reads s1 pending, though the pass listed the claims before the claim.
    const db = pendingDatabase(
      () => [item("s1")],
      () => h.claim(["s1"]),
    );
    const p = startProvisioner(db.sql, "t", compute as never, quiet, 5, h);
    await eventually(async () => db.reads() >= 3, 5_000);
    await p.stop();
    assert.deepEqual(calls, [], "compute was asked for s1 by the provisioner too");
  });

  it("the provisioner asks compute for a pending service nobody claimed", async () => {
    const { compute, calls } = fakeCompute();
    const h = provisioningHandOver(sqlUnused, "t", compute as never, quiet);
    const db = pendingDatabase(() => [item("s2")]);
    const p = startProvisioner(db.sql, "t", compute as never, quiet, 5, h);
    await eventually(async () => calls.length >= 1, 5_000);
    await p.stop();
    assert.deepEqual(calls[0], { records: [], services: ["s2"] });
  });

  it("hands records alone over with ApplyServiceRecords (an order left unpaid has nothing to build)", async () => {
    const { compute, calls, applied } = fakeCompute();
    const h = provisioningHandOver(sqlUnused, "t", compute as never, quiet);
    await h.send([event("e1")], []);
    assert.deepEqual(applied, [["e1"]]);
    assert.deepEqual(calls, []);
  });
});
