import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { StaffActionOutcome } from "@hb/contracts/hb/auth/v1/staff_audit_pb";
import type { Response } from "express";
import { eventually } from "../../../../test/support/eventually.ts";
import type { PageClients } from "../clients.ts";
import { auditor, OutcomeUnknown } from "./staff-audit.ts";

/** An auth client that records the audit calls; `down` makes the named call fail as unreachable. */
function fakeAuth(down: { begin?: boolean; finish?: boolean } = {}) {
  const calls: { method: string; req: Record<string, unknown> }[] = [];
  const unavailable = () => new ConnectError("auth is unreachable", Code.Unavailable);
  const auth = {
    beginStaffAction: async (req: Record<string, unknown>) => {
      calls.push({ method: "begin", req });
      if (down.begin) throw unavailable();
      return { auditId: "a1" };
    },
    finishStaffAction: async (req: Record<string, unknown>) => {
      calls.push({ method: "finish", req });
      if (down.finish) throw unavailable();
      return {};
    },
  };
  // Only the two audit calls are used by `audited`.
  return { clients: { auth } as unknown as PageClients, calls };
}

const res = { locals: { session: { subjectId: "s1" } } } as unknown as Response;

describe("audited", () => {
  it("records the action before the write and its success after, with the state the write answered", async () => {
    const { clients, calls } = fakeAuth();
    const order: string[] = [];
    const r = await auditor(clients)(
      res,
      { action: "customer.update", customerId: "c1", before: { name: "A" }, after: { name: "B" } },
      async () => {
        order.push(`write after ${calls.length} audit call`);
        return { name: "B!" };
      },
      (x) => ({ after: x }),
    );
    assert.deepEqual(r, { name: "B!" });
    assert.deepEqual(order, ["write after 1 audit call"]);
    assert.deepEqual(calls[0].req, {
      staffId: "s1",
      customerId: "c1",
      action: "customer.update",
      target: "",
      before: '{"name":"A"}',
      after: '{"name":"B"}',
      reason: "",
    });
    assert.equal(calls[1].req.outcome, StaffActionOutcome.SUCCEEDED);
    assert.equal(calls[1].req.after, '{"name":"B!"}');
  });

  it("does not write when the audit row cannot be recorded", async () => {
    const { clients } = fakeAuth({ begin: true });
    let wrote = false;
    await assert.rejects(
      auditor(clients)(res, { action: "credit.adjust" }, async () => {
        wrote = true;
      }),
      (err) => ConnectError.from(err).code === Code.Unavailable,
    );
    assert.equal(wrote, false);
  });

  it("records a refused write as failed with the service's message, and passes the refusal on", async () => {
    const { clients, calls } = fakeAuth();
    const refusal = new ConnectError("Insufficient credit balance", Code.InvalidArgument);
    await assert.rejects(
      auditor(clients)(res, { action: "credit.adjust" }, async () => {
        throw refusal;
      }),
      (err) => err === refusal,
    );
    assert.equal(calls[1].req.outcome, StaffActionOutcome.FAILED);
    assert.match(String(calls[1].req.error), /Insufficient credit balance/);
  });

  it("keeps a write's result when its outcome cannot be recorded (the row stays pending)", async () => {
    const { clients } = fakeAuth({ finish: true });
    const r = await auditor(clients)(res, { action: "key.revoke" }, async () => "revoked");
    assert.equal(r, "revoked");
  });

  it("records a write whose answer was lost as unknown, never failed, hands the write its audit id, and finishes the row with what the owner reports", async () => {
    const { clients, calls } = fakeAuth();
    let key = "";
    await assert.rejects(
      auditor(clients)(
        res,
        {
          action: "credit.adjust",
          settle: async (auditId) => ({ committed: auditId === key, customerId: "c9" }),
        },
        async (auditId) => {
          key = auditId;
          throw new ConnectError("deadline exceeded", Code.DeadlineExceeded);
        },
      ),
      (err) => err instanceof OutcomeUnknown && err.auditId === "a1",
    );
    assert.equal(key, "a1", "the write is keyed by its audit id");
    assert.equal(calls[1].req.outcome, StaffActionOutcome.UNKNOWN);
    // Settled in the background: the owner says it committed.
    await eventually(async () => calls.length === 3);
    assert.deepEqual([calls[2].req.outcome, calls[2].req.customerId], [StaffActionOutcome.SUCCEEDED, "c9"]);
  });
});
