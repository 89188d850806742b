import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { type Count, countBillingStatements } from "../scripts/bench/billing-statements.ts";

// Every round trip to PostgreSQL costs both processes a system call on each side, the largest
// single cost of the order path (docs/benchmarks.md): the statements of one step go together.
describe("billing's round trips to PostgreSQL", () => {
  // One scratch database for both: 12 orders, 12 pays, then a batch of the orders' build reports.
  let counted: { order: Count; pay: Count; builds: Count };
  before(async () => {
    counted = await countBillingStatements(12);
  });

  it("an order settled from credit takes 3 and an invoice pay 1 on the wire, each with an Idempotency-Key", () => {
    const { order, pay } = counted;
    // begin with the key's lock and record, the prices and the balance; the order, its payment,
    // the invoice, the order's and services' updates and the services' read; the event and the
    // key's answer with the commit.
    assert.equal(order.roundTrips, 3, order.sample.join("\n"));
    assert.equal(order.transactions, 1);
    // One statement on its own (pay_from_credit, migration 021): the key's lock and record, the
    // balance and the document locked, the payment and the key's answer; no begin or commit.
    assert.equal(pay.roundTrips, 1, pay.sample.join("\n"));
    assert.equal(pay.statements, 1, pay.sample.join("\n"));
    assert.equal(pay.transactions, 0);
  });

  it("compute's reports that a batch of services is built are applied in 5, however many it holds", () => {
    const { builds } = counted;
    // begin; each report recorded and its service moved; the services and their orders read; the
    // services' events; commit. It was a transaction of 10 round trips per report.
    assert.equal(builds.roundTrips, 5, builds.sample.join("\n"));
    assert.equal(builds.transactions, 1);
    // Every report's service event in one statement (machine-reports.test.ts checks the events).
    assert.equal(builds.sample.filter((s) => s.includes("insert into outbox")).length, 1);
  });
});
