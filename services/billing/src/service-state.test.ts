import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ServiceRow } from "./records.ts";
import { type Actor, refundsOnTermination } from "./service-state.ts";

const held = (...suspensions: string[]) => ({ suspensions }) as unknown as ServiceRow;

describe("who gets the unused time back on termination", () => {
  it("the customer and a partner do; staff and billing never do", () => {
    const by: Actor[] = ["customer", "partner", "supplier", "billing"];
    assert.deepEqual(
      by.map((a) => refundsOnTermination(held(), a)),
      [true, true, false, false],
    );
  });

  it("nobody does while the supplier holds a suspension (abuse), whoever else holds one too", () => {
    for (const s of [held("supplier"), held("partner", "supplier"), held("supplier", "billing")])
      for (const a of ["customer", "partner"] as const) assert.equal(refundsOnTermination(s, a), false);
  });

  it("a partner's or billing's suspension alone does not take the refund away", () => {
    assert.equal(refundsOnTermination(held("partner"), "customer"), true);
    assert.equal(refundsOnTermination(held("billing"), "partner"), true);
  });
});
