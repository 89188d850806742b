/**
 * Every staff write of the admin panel goes through `audited`: the audit row is recorded in auth
 * before the write is made, and its outcome after. If the row cannot be recorded the write is not
 * made (the page answers 503); if the outcome cannot be recorded the row stays pending, so a write
 * is never without its row. Before and after hold facts staff see on the pages, never a secret.
 *
 * The audit id is handed to the write, and money writes send it as their idempotency key. A write
 * whose answer is lost (its deadline passed, the service was unavailable) may have committed, so
 * its row reads "unknown", never "failed", and the page says so (OutcomeUnknown); when the write
 * can be settled (`settle`: ask the service that owns the data whether the write with that key
 * committed, which also fences it so it never commits later), the row is finished with what the
 * owner reports, in the background.
 */
import { StaffActionOutcome } from "@hb/contracts/hb/auth/v1/staff_audit_pb";
import { type Logger, resolveError } from "@hb/platform";
import type { Response } from "express";
import type { PageClients } from "../clients.ts";
import { sessionOf } from "./session.ts";

type Facts = Record<string, unknown>;

export interface StaffWrite {
  /** A stable name: customer.update, credit.adjust, key.revoke... */
  action: string;
  /** The customer concerned; none for company-wide writes (staff, settings). */
  customerId?: string;
  /** What is acted on within the customer (a key, person, service), by id. */
  target?: string;
  before?: Facts;
  /** The change asked for. */
  after?: Facts;
  reason?: string;
  /**
   * Asks the data's owner whether the write keyed by the audit id committed (and makes sure it
   * never will if it has not): for writes whose lost answer can be settled.
   */
  settle?: (auditId: string) => Promise<Settled>;
}

/** What the owner reports of a write whose answer was lost. */
export interface Settled {
  committed: boolean;
  after?: Facts;
  customerId?: string;
}

/** The write's answer was lost: it may or may not have happened; the audit row reads unknown. */
export class OutcomeUnknown extends Error {
  readonly auditId: string;
  constructor(auditId: string) {
    super(
      "No answer came in time, so this may or may not have been done. Do not send it again: the audit log shows the outcome once it is known.",
    );
    this.auditId = auditId;
  }
}

/** A lost answer (deadline, unavailable): the write may have committed all the same. */
const answerLost = (err: unknown) => resolveError(err).status === 503;

/** Waits between attempts to settle a write whose answer was lost (the last: about a minute in). */
const SETTLE_PAUSES_MS = [0, 250, 500, 1_000, 2_000, 4_000, 8_000, 15_000, 30_000];

export type Audited = <T>(
  res: Response,
  w: StaffWrite,
  /** The write; money writes send `auditId` as their idempotency key. */
  write: (auditId: string) => Promise<T>,
  /** The state after, from the write's answer; and the customer, when the write created it. */
  outcome?: (r: T) => { after?: Facts; customerId?: string },
) => Promise<T>;

const json = (f: Facts | undefined) => (f ? JSON.stringify(f) : "");

export function auditor(clients: PageClients, log?: Logger): Audited {
  return async function audited<T>(
    res: Response,
    w: StaffWrite,
    write: (auditId: string) => Promise<T>,
    outcome?: (r: T) => { after?: Facts; customerId?: string },
  ): Promise<T> {
    const { auditId } = await clients.auth.beginStaffAction({
      staffId: sessionOf(res).subjectId,
      customerId: w.customerId ?? "",
      action: w.action,
      target: w.target ?? "",
      before: json(w.before),
      after: json(w.after),
      reason: w.reason ?? "",
    });
    const finish = (r: Parameters<typeof clients.auth.finishStaffAction>[0]) =>
      clients.auth.finishStaffAction(r).catch((err: unknown) => {
        // The write's fate is already decided; the row stays pending, which the log shows.
        log?.warn("staff audit outcome not recorded", { auditId, action: w.action, err });
      });
    let result: T;
    try {
      result = await write(auditId);
    } catch (err) {
      if (!answerLost(err)) {
        await finish({ auditId, outcome: StaffActionOutcome.FAILED, error: resolveError(err).message });
        throw err;
      }
      await finish({ auditId, outcome: StaffActionOutcome.UNKNOWN, error: resolveError(err).message });
      if (w.settle) void settleLater(auditId, w.settle, finish, log);
      throw new OutcomeUnknown(auditId);
    }
    const o = outcome?.(result) ?? {};
    await finish({
      auditId,
      outcome: StaffActionOutcome.SUCCEEDED,
      after: json(o.after),
      customerId: o.customerId ?? "",
    });
    return result;
  };
}

/**
 * Settles a write whose answer was lost and finishes its audit row with the owner's report, trying
 * again (with growing pauses) while the owner cannot answer; the row stays unknown if it never does.
 */
async function settleLater(
  auditId: string,
  settle: (auditId: string) => Promise<Settled>,
  finish: (r: Parameters<PageClients["auth"]["finishStaffAction"]>[0]) => Promise<unknown>,
  log: Logger | undefined,
): Promise<void> {
  for (const pause of SETTLE_PAUSES_MS) {
    if (pause) await new Promise((r) => setTimeout(r, pause));
    let s: Settled;
    try {
      s = await settle(auditId);
    } catch (err) {
      log?.warn("staff write not settled yet", { auditId, err });
      continue;
    }
    await finish(
      s.committed
        ? {
            auditId,
            outcome: StaffActionOutcome.SUCCEEDED,
            after: json(s.after),
            customerId: s.customerId ?? "",
          }
        : {
            auditId,
            outcome: StaffActionOutcome.FAILED,
            error: "The answer was lost; the owner reports the write was not made (and now never will be)",
          },
    );
    return;
  }
  log?.warn("staff write left unknown: its owner never answered", { auditId });
}

/**
 * Settles a billing money write (a credit adjustment, a transfer confirmation) by its key, the
 * audit id. The row keeps the change asked for as its after; the customer comes from the entry.
 */
export const settleMoneyWrite =
  (clients: PageClients) =>
  async (auditId: string): Promise<Settled> => {
    const r = await clients.billing.deskSettleWrite({ idempotencyKey: auditId });
    return { committed: r.committed, customerId: r.customerId || undefined };
  };
