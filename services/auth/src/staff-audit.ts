/**
 * The audit log of staff writes (staff_audit.proto). The admin panel records each write before
 * making it and its outcome after, so a write that happened always has its row; one whose outcome
 * never arrived (the panel stopped mid-way) stays pending, which is itself worth seeing. One whose
 * answer was lost (the write's deadline passed) reads unknown until the panel settles it with the
 * data's owner.
 */
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type StaffActionOutcome, StaffActionOutcomeSchema } from "@hb/contracts/hb/auth/v1/staff_audit_pb";
import { apiError, badRequest, enumOfWord, enumWord, newId, notFound, type Sql } from "@hb/platform";
import type { AuthHandlers } from "./handlers.ts";

interface AuditRow {
  id: string;
  staff_id: string;
  staff_name: string;
  staff_email: string;
  customer_id: string | null;
  action: string;
  target: string;
  before: unknown;
  after: unknown;
  reason: string;
  outcome: string;
  error: string;
  created_at: Date;
  finished_at: Date | null;
}

/** A JSON object as text, or null for none; anything else is the caller's mistake. */
function jsonObject(field: string, text: string): string | null {
  if (!text) return null;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw badRequest(field, "must be a JSON object");
  }
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw badRequest(field, "must be a JSON object");
  return text;
}

const text = (v: unknown) => (v === null || v === undefined ? "" : JSON.stringify(v));

export function createStaffAudit(sql: Sql): AuthHandlers {
  return {
    async beginStaffAction(req) {
      const id = newId();
      const before = jsonObject("before", req.before);
      const after = jsonObject("after", req.after);
      // The staff member's name and e-mail are copied from their row in the same statement: the
      // log keeps who acted even if the staff record changes later.
      const rows = await sql`
        insert into staff_audit (id, staff_id, staff_name, staff_email, customer_id, action, target, before, after, reason)
        select ${id}, s.id, s.name, s.email, ${req.customerId || null}, ${req.action}, ${req.target},
               ${before}::text::jsonb, ${after}::text::jsonb, ${req.reason.trim()}
        from staff s where s.id = ${req.staffId}
        returning id`.catch((err: unknown) => {
        if ((err as { code?: unknown }).code === "23503") throw notFound("Customer");
        throw err;
      });
      if (rows.length === 0) throw notFound("Staff member");
      return { auditId: id };
    },

    async finishStaffAction(req) {
      // The row stores the outcome's word (pending, unknown, succeeded, failed).
      const outcome = enumWord(StaffActionOutcomeSchema, req.outcome);
      const after = jsonObject("after", req.after);
      // An outcome is written once: a pending row takes any; an unknown row (the answer was lost)
      // only the outcome its owner reported later, succeeded or failed.
      const from = outcome === "unknown" ? ["pending"] : ["pending", "unknown"];
      const rows = await sql`update staff_audit
        set outcome = ${outcome}, error = ${req.error}, finished_at = clock_timestamp(),
            after = coalesce(${after}::text::jsonb, after),
            customer_id = coalesce(customer_id, ${req.customerId || null}::uuid)
        where id = ${req.auditId} and outcome = any(${from}) returning id`;
      if (rows.length === 0) {
        const [exists] = await sql`select 1 from staff_audit where id = ${req.auditId}`;
        if (!exists) throw notFound("Audit entry");
        throw apiError("CONFLICT", "The audit entry already has its outcome");
      }
      return {};
    },

    async listStaffActions(req) {
      const limit = req.limit || 20;
      const offset = ((req.page || 1) - 1) * limit;
      const where = req.customerId ? sql`where customer_id = ${req.customerId}` : sql``;
      const [rows, [{ n }]] = await Promise.all([
        sql<AuditRow[]>`select * from staff_audit ${where}
          order by created_at desc, id desc limit ${limit} offset ${offset}`,
        sql<{ n: number }[]>`select count(*)::int as n from staff_audit ${where}`,
      ]);
      return {
        total: n,
        actions: rows.map((r) => ({
          id: r.id,
          staffId: r.staff_id,
          staffName: r.staff_name,
          staffEmail: r.staff_email,
          customerId: r.customer_id ?? "",
          action: r.action,
          target: r.target,
          before: text(r.before),
          after: text(r.after),
          reason: r.reason,
          outcome: enumOfWord<StaffActionOutcome>(StaffActionOutcomeSchema, r.outcome),
          error: r.error,
          createdAt: timestampFromDate(r.created_at),
          finishedAt: r.finished_at ? timestampFromDate(r.finished_at) : undefined,
        })),
      };
    },
  };
}
