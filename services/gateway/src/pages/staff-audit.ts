/**
 * Every staff write of the admin panel goes through `audited`: the audit row is recorded in auth
 * before the write is made, and its outcome after. If the row cannot be recorded the write is not
 * made (the page answers 503); if the outcome cannot be recorded the row stays pending, so a write
 * is never without its row. Before and after hold facts staff see on the pages, never a secret.
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
}

export type Audited = <T>(
  res: Response,
  w: StaffWrite,
  write: () => Promise<T>,
  /** The state after, from the write's answer; and the customer, when the write created it. */
  outcome?: (r: T) => { after?: Facts; customerId?: string },
) => Promise<T>;

const json = (f: Facts | undefined) => (f ? JSON.stringify(f) : "");

export function auditor(clients: PageClients, log?: Logger): Audited {
  return async function audited<T>(
    res: Response,
    w: StaffWrite,
    write: () => Promise<T>,
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
      result = await write();
    } catch (err) {
      await finish({ auditId, outcome: StaffActionOutcome.FAILED, error: resolveError(err).message });
      throw err;
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
