import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { type PaidTerm, termsValue } from "./addon-terms.ts";
import type { ServiceRow } from "./records.ts";
import { type Actor, refundsOnTermination, returnsAddonsOnTermination } from "./service-state.ts";

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 31);

/** Consecutive paid terms of 28–31 days from T0, each paid 0–100.0000, and an instant among them. */
const history = fc
  .array(
    fc.record({ days: fc.integer({ min: 28, max: 31 }), paid: fc.bigInt({ min: 0n, max: 1_000_000n }) }),
    {
      minLength: 1,
      maxLength: 8,
    },
  )
  .chain((raw) => {
    let at = T0;
    const terms: PaidTerm[] = raw.map((r) => {
      const start = new Date(at);
      at += r.days * DAY;
      return { paid: r.paid, start, end: new Date(at) };
    });
    return fc.record({
      terms: fc.constant(terms),
      now: fc.integer({ min: T0 - 5 * DAY, max: at + 5 * DAY }).map((t) => new Date(t)),
    });
  });

describe("an add-on's worth when given up (issue 28 §2)", () => {
  it("is the unused share of the current term plus every term paid ahead: never averaged, never more", () => {
    fc.assert(
      fc.property(history, ({ terms, now }) => {
        const value = termsValue(terms, now);
        const current = terms.find(
          (t) => t.start.getTime() <= now.getTime() && now.getTime() < t.end.getTime(),
        );
        const ahead = terms.filter((t) => t.start.getTime() > now.getTime()).reduce((s, t) => s + t.paid, 0n);
        // The current term's unused share, exactly (rounded down): what 23.70 of 31 days left of
        // 3.00 is (2.2935), not the history's average (2.3185).
        const share = current
          ? (current.paid * BigInt(current.end.getTime() - now.getTime())) /
            BigInt(current.end.getTime() - current.start.getTime())
          : 0n;
        assert.equal(value, share + ahead);
        assert.ok(value <= terms.reduce((s, t) => s + t.paid, 0n), "never more than was paid");
        assert.ok(value >= 0n);
      }),
    );
  });

  it("never grows as time passes", () => {
    fc.assert(
      fc.property(history, fc.integer({ min: 0, max: 60 * DAY }), ({ terms, now }, later) => {
        assert.ok(termsValue(terms, new Date(now.getTime() + later)) <= termsValue(terms, now));
      }),
    );
  });
});

describe("the abuse rule, one for the service and its add-ons (issue 28 §3)", () => {
  const actors: Actor[] = ["customer", "partner", "supplier", "billing"];
  const sources = fc.subarray(["billing", "supplier", "partner", "customer"]);
  it("nothing comes back while the supplier holds a suspension or ends the service; add-ons come back otherwise", () => {
    fc.assert(
      fc.property(sources, fc.constantFrom(...actors), (suspensions, by) => {
        const s = { suspensions } as unknown as ServiceRow;
        const abuse = suspensions.includes("supplier") || by === "supplier";
        if (abuse) {
          assert.equal(refundsOnTermination(s, by), false);
          assert.equal(returnsAddonsOnTermination(s, by), false);
        } else {
          // Prepaid add-ons are never forfeited when the service ends (non-payment, end of term).
          assert.equal(returnsAddonsOnTermination(s, by), true);
        }
      }),
    );
  });
});
