/**
 * The property: for any sequence of commands by a fresh cast of actors, every invariant holds
 * after every step. Used by the bounded run in `npm test` and by `npm run fuzz:billing`.
 */
import { ServiceAction } from "@hb/contracts/hb/billing/v1/services_pb";
import fc from "fast-check";
import { type Cmd, describe, execute, sequenceArb } from "./commands.ts";
import { checkInvariants, type Scope, type Violation } from "./invariants.ts";
import { RunModel } from "./model.ts";
import { newActors, type World } from "./world.ts";

/** Thrown at the first step after which an invariant is broken; its message is the report. */
export class InvariantBroken extends Error {
  readonly violations: Violation[];
  readonly trail: string[];
  constructor(violations: Violation[], trail: string[]) {
    super(
      [
        `${violations.length} invariant(s) broken after step ${trail.filter((l) => /^\d+\./.test(l)).length}:`,
        ...violations.map((v) => `  ✗ [${v.invariant}] ${v.detail}`),
        "steps (with the calls they made):",
        ...trail.map((l) => `  ${l}`),
      ].join("\n"),
    );
    this.name = "InvariantBroken";
    this.violations = violations;
    this.trail = trail;
  }
}

const STARTING_CREDIT: Record<string, number> = { owner: 800, member: 160, partner: 300 };

/** Runs one command sequence against a fresh cast, checking the invariants after every step. */
export async function runSequence(w: World, cmds: Cmd[], opts: Omit<PropertyOptions, "maxCommands"> = {}) {
  const actors = await newActors(w);
  const m = new RunModel(w, actors);
  m.sameCurrency = opts.sameCurrency ?? false;
  const ignore = opts.ignore ?? [];
  for (const p of [...actors.people, actors.partner]) {
    const amount = STARTING_CREDIT[p.label.replace(/\d+$/, "")] ?? 0;
    await w.billing.adminAdjustCredit({
      personId: p.personId,
      customerId: p.customerId,
      amount: String(amount),
      currency: p.currency,
      description: "starting credit",
    });
    m.added.set(p.personId, BigInt(amount) * 10_000n);
  }
  const scope = {
    customers: actors.customers,
    partnerId: actors.partner.customerId,
    added: m.added,
    toppedUp: m.toppedUp,
    refunded: m.refunded,
    ledgerCurrency: w.ledgerCurrency,
    names: new Map([...actors.people, actors.partner].map((p) => [p.personId, p.label])),
  };
  const trail: string[] = [];
  try {
    await steps(m, cmds, trail, scope, ignore);
  } finally {
    // Hourly services left running would be charged hour by hour on every later clock move.
    for (const svc of m.services.values())
      if (svc.cycle === "hourly" && svc.status !== "terminated")
        await w.billing
          .adminSetServiceState({ serviceId: svc.id, action: ServiceAction.TERMINATE, reason: "end of run" })
          .catch(() => {});
  }
  // FUZZ_TRACE=1 shows what each passing run did (to see which commands reach the money rules).
  if (process.env.FUZZ_TRACE) process.stdout.write(`--- run passed\n${trail.join("\n")}\n`);
}

async function steps(m: RunModel, cmds: Cmd[], trail: string[], scope: Scope, ignore: string[]) {
  const w = m.w;
  for (const [i, c] of cmds.entries()) {
    const t0 = Date.now();
    const stepLo = w.clock.lo();
    const { violations, notes } = await execute(m, c);
    await m.settle();
    const seen = [
      ...violations,
      ...(await m.refresh(stepLo, w.clock.hi())),
      ...(await checkInvariants(w.sql, scope)),
    ];
    const found = seen.filter((v) => !ignore.includes(v.invariant));
    trail.push(`${i + 1}. ${describe(c)} (${Date.now() - t0} ms)`, ...notes.map((n) => `     ${n}`));
    if (found.length > 0) throw new InvariantBroken(found, trail);
  }
}

export interface PropertyOptions {
  maxCommands: number;
  /** Command kinds left out (e.g. to look past one known defect to the next). */
  without?: Cmd["t"][];
  /** Orders, upgrades and staff credit only in the actor's currency. */
  sameCurrency?: boolean;
  /** Invariants whose breach is not a failure (to look past a known defect). */
  ignore?: string[];
}

export function billingProperty(w: World, opts: PropertyOptions) {
  const without = opts.without ?? [];
  const seq = sequenceArb(w.products.length, opts.maxCommands, (c) => !without.includes(c.t));
  return fc.asyncProperty(seq, (cmds) => runSequence(w, cmds, opts));
}
