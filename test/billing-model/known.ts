import type { Cmd } from "./commands.ts";

/**
 * Sequences that broke a property before its fix (issue 21), run first on every run: each fails
 * again if its fix is reverted. Actor 1 is the first customer's member (160 credit), product 0
 * the EUR 10/100 plan.
 */
export const KNOWN: Cmd[][] = [
  // A service for nothing: two items on one proforma, 80% paid, one cancelled at once; the drop
  // completed the proforma with the part-payment and the "unused time" was refunded from it.
  // Properties: no document paid while less than its total was kept; revenue follows time (the
  // cancelled item's earned went below 0).
  [
    { t: "order", a: 1, product: 0, cycle: "annually", copies: 1, idem: false, items: 2 },
    { t: "pay", a: 1, doc: 0, percent: 80, asString: false, copies: 1, idem: false },
    { t: "cancel", a: 1, svc: 0, immediate: true },
  ],
  // A partner suspending first swallowed the supplier's suspension (409, lost), then lifted it.
  // Property: a supplier suspension is lifted only by the supplier.
  [
    { t: "rOrder", ext: 0, product: 0, mode: "credit", copies: 1 },
    { t: "rState", svc: 0, action: "suspend" },
    { t: "staff", svc: 0, action: "suspend" },
    { t: "rState", svc: 0, action: "unsuspend" },
  ],
  // A late-paid upgrade: priced when requested, in effect when paid 24 days later, it charged the
  // difference for the days spent on the old plan too (15 for a week of eur-large).
  // Property: revenue follows time (earned above the price in force × the time provided).
  [
    { t: "order", a: 0, product: 0, cycle: "monthly", copies: 1, idem: false, items: 1 },
    { t: "upgrade", a: 0, svc: 0, to: 2 },
    { t: "advance", unit: "days", n: 12 },
    { t: "advance", unit: "days", n: 12 },
    { t: "pay", a: 0, doc: 0, percent: 100, asString: false, copies: 1, idem: false },
    { t: "pay", a: 0, doc: 1, percent: 100, asString: false, copies: 1, idem: false },
  ],
  // No recurring cycle: a service whose year ran out stayed active, with no renewal.
  // Property: every active recurring service is paid up, or in its grace with the renewal open.
  [
    { t: "order", a: 1, product: 0, cycle: "annually", copies: 1, idem: false, items: 1 },
    { t: "advance", unit: "months", n: 13 },
  ],
];
