/**
 * Staff money writes that cannot double, lie or vanish (issue 28 §4), at the edges staff and the
 * database see: the admin panel's forms over HTTP, billing's staff RPCs as each identity calls
 * them, the ledger and the audit log.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { type StaffAction, StaffActionOutcome } from "@hb/contracts/hb/auth/v1/staff_audit_pb";
import { BillingDeskService } from "@hb/contracts/hb/billing/v1/billing_desk_pb";
import { TopUpStaffService } from "@hb/contracts/hb/billing/v1/payments_pb";
import { resolveError } from "@hb/platform";
import { auth, GATEWAY, grpc, unique } from "./helpers.ts";
import { csrfIn, onceIn, portalOwner, signInVisitor, staffMember } from "./portal-pages.ts";
import { eventually } from "./support/eventually.ts";
import { serviceSql } from "./support/service-db.ts";

const asCommand = grpc([BillingDeskService, TopUpStaffService], "BILLING_ADDR", "admin");
const asPanel = grpc([BillingDeskService, TopUpStaffService], "BILLING_ADDR", "admin-panel");

const auditOf = async (customerId: string): Promise<StaffAction[]> =>
  (await auth.listStaffActions({ customerId, limit: 200 })).actions;

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => "OK",
    (err: unknown) => resolveError(err).code,
  );

describe("staff money writes", () => {
  const sql = serviceSql("billing");
  /** A connection of its own that holds a balance row locked, as psql would. */
  const holderSql = serviceSql("billing");
  let editor: Awaited<ReturnType<typeof staffMember>>;
  let admin: Awaited<ReturnType<typeof signInVisitor>>;

  before(async () => {
    editor = await staffMember(["view_clients", "edit_clients"]);
    admin = await signInVisitor(GATEWAY, "admin", editor.email);
  });
  after(async () => {
    await Promise.all([sql.end({ timeout: 5 }), holderSql.end({ timeout: 5 })]);
  });

  const entries = async (personId: string, description: string) => [
    ...(await sql<{ amount: string; staff_id: string | null; operator: string | null }[]>`
      select amount::text, staff_id::text, operator from billing.ledger
      where person_id = ${personId} and description = ${description} order by id`),
  ];

  /** The balance tab's credit form: its CSRF and one-time tokens. */
  async function creditForm(customerId: string) {
    const page = await admin.get(`/admin/customers/${customerId}/balance`);
    assert.equal(page.status, 200);
    const action = `/admin/customers/${customerId}/credit`;
    const _once = onceIn(page.text, action);
    assert.ok(_once, "the credit form carries a one-time token");
    return { action, fields: { _csrf: csrfIn(page.text), _once } };
  }

  it("a credit form sent three times (double click, reload) credits once, and every copy lands on the same page", async () => {
    const acct = await portalOwner();
    const reason = unique("Goodwill");
    const { action, fields } = await creditForm(acct.customerId);
    const form = { ...fields, person: acct.ownerId, amount: "12.50", reason };
    const sent = await Promise.all([admin.post(action, form), admin.post(action, form)]);
    const reloaded = await admin.post(action, form);
    for (const r of [...sent, reloaded]) assert.equal(r.status, 303, r.text);
    assert.deepEqual(new Set([...sent, reloaded].map((r) => r.location)).size, 1);
    assert.deepEqual(
      (await entries(acct.ownerId, reason)).map((e) => e.amount),
      ["12.5000"],
      "one ledger entry",
    );
    const audit = (await auditOf(acct.customerId)).filter((a) => a.action === "credit.adjust");
    assert.equal(audit.length, 1, "one audit row");
  });

  it("DeskAdjustCredit with the same key twice credits once and answers the first result; the key on another write is refused", async () => {
    const acct = await portalOwner();
    const reason = unique("Refund of a fee");
    const req = {
      customerId: acct.customerId,
      personId: acct.ownerId,
      staffId: editor.staffId,
      amount: "7",
      reason,
      idempotencyKey: randomUUID(),
    };
    const [a, b] = await Promise.all([asPanel.deskAdjustCredit(req), asPanel.deskAdjustCredit(req)]);
    const c = await asPanel.deskAdjustCredit(req);
    assert.equal(a.transactionId, b.transactionId);
    assert.equal(a.transactionId, c.transactionId);
    assert.equal(c.balance?.amount, a.balance?.amount);
    assert.equal((await entries(acct.ownerId, reason)).length, 1);
    assert.equal(await codeOf(asPanel.deskAdjustCredit({ ...req, amount: "8" })), "CONFLICT");
  });

  it("a credit held behind a locked balance past the panel's deadline is recorded unknown, never failed while it committed", async () => {
    const acct = await portalOwner();
    // The balance row exists (a first credit), so the test can hold it.
    await asPanel.deskAdjustCredit({
      customerId: acct.customerId,
      personId: acct.ownerId,
      staffId: editor.staffId,
      amount: "1",
      reason: "opening",
      idempotencyKey: randomUUID(),
    });
    const reason = unique("Held credit");
    const { action, fields } = await creditForm(acct.customerId);
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => {
      locked = r;
    });
    const holder = holderSql.begin(async (tx) => {
      await tx`select 1 from billing.balances where person_id = ${acct.ownerId} for update`;
      locked();
      await released;
    });
    await isLocked;
    // Watches the audit row and the ledger together for the whole run: "failed" while the credit
    // is on the ledger is the lie this test is about.
    const seen: string[] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const row = (await auditOf(acct.customerId)).find((a) => a.reason === reason);
        const committed = (await entries(acct.ownerId, reason)).length > 0;
        if (row) seen.push(`${StaffActionOutcome[row.outcome]}${committed ? "+committed" : ""}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    try {
      const r = await admin.post(action, { ...fields, person: acct.ownerId, amount: "40", reason });
      assert.equal(r.status, 503, "the page says the outcome is not known");
      assert.match(r.text, /may or may not have been done/);
    } finally {
      release();
      await holder;
    }
    // A later write to the same balance queues behind any write still waiting for the row, so once
    // it is done the held credit has committed or never will.
    await asPanel.deskAdjustCredit({
      customerId: acct.customerId,
      personId: acct.ownerId,
      staffId: editor.staffId,
      amount: "1",
      reason: "after the release",
      idempotencyKey: randomUUID(),
    });
    const settled = await eventually(async () => {
      const row = (await auditOf(acct.customerId)).find((a) => a.reason === reason);
      return row &&
        (row.outcome === StaffActionOutcome.SUCCEEDED || row.outcome === StaffActionOutcome.FAILED)
        ? row
        : undefined;
    }, 20_000);
    watching = false;
    await watcher;
    const committed = (await entries(acct.ownerId, reason)).length > 0;
    assert.equal(
      committed,
      settled.outcome === StaffActionOutcome.SUCCEEDED,
      `settled as ${settled.outcome}`,
    );
    assert.ok(
      !seen.includes("FAILED+committed"),
      `the audit row read failed while the credit committed: ${seen}`,
    );
    // Failed only as settled with billing after the lost answer (unknown first), never at once.
    if (settled.outcome === StaffActionOutcome.FAILED) assert.match(settled.error, /answer was lost/);
    // The same form again (the reload after the lost answer) writes nothing new.
    const again = await admin.post(action, { ...fields, person: acct.ownerId, amount: "40", reason });
    assert.equal(again.status, 409);
    assert.equal((await entries(acct.ownerId, reason)).length, committed ? 1 : 0);
  });

  it("records the admin command as itself on the ledger, never the staff member it names; the panel's staff member as the panel says", async () => {
    const acct = await portalOwner();
    const colleague = await staffMember(["view_clients", "edit_clients"]);
    const byCommand = unique("By the command");
    await asCommand.deskAdjustCredit({
      customerId: acct.customerId,
      personId: acct.ownerId,
      staffId: colleague.staffId,
      amount: "3",
      reason: byCommand,
      idempotencyKey: randomUUID(),
    });
    assert.deepEqual(await entries(acct.ownerId, byCommand), [
      { amount: "3.0000", staff_id: null, operator: "admin" },
    ]);
    const byPanel = unique("By the panel");
    await asPanel.deskAdjustCredit({
      customerId: acct.customerId,
      personId: acct.ownerId,
      staffId: editor.staffId,
      amount: "2",
      reason: byPanel,
      idempotencyKey: randomUUID(),
    });
    assert.deepEqual(await entries(acct.ownerId, byPanel), [
      { amount: "2.0000", staff_id: editor.staffId, operator: "admin-panel" },
    ]);
  });

  it("checks the staff member the panel names in billing itself: no such staff member, or one without edit clients, moves nothing", async () => {
    const acct = await portalOwner();
    const viewer = await staffMember(["view_clients"]);
    const write = (staffId: string) =>
      codeOf(
        asPanel.deskAdjustCredit({
          customerId: acct.customerId,
          personId: acct.ownerId,
          staffId,
          amount: "500",
          reason: "not staff",
          idempotencyKey: randomUUID(),
        }),
      );
    // A customer's person is not a staff member, whatever the caller's certificate.
    assert.equal(await write(acct.ownerId), "UNAUTHORIZED");
    assert.equal(await write(viewer.staffId), "FORBIDDEN");
    assert.equal((await entries(acct.ownerId, "not staff")).length, 0);
  });

  it("a status change whose answer is lost answers 503 saying the outcome is not known yet, never a 500", async () => {
    const acct = await portalOwner();
    const holder = serviceSql("auth");
    const page = await admin.get(`/admin/customers/${acct.customerId}`);
    const action = `/admin/customers/${acct.customerId}/suspend`;
    const fields = { _csrf: csrfIn(page.text), _once: onceIn(page.text, action), reason: "held" };
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => {
      locked = r;
    });
    // The customer's row held as psql would (no key update: the audit row's reference to it still
    // goes through), so auth's status change waits past the panel's deadline.
    const held = holder.begin(async (tx) => {
      await tx`select 1 from auth.customers where id = ${acct.customerId} for no key update`;
      locked();
      await released;
    });
    try {
      await isLocked;
      const r = await admin.post(action, fields);
      assert.equal(r.status, 503, r.text.slice(0, 300));
      assert.match(r.text, /may or may not have been done/);
    } finally {
      release();
      await held;
      await holder.end({ timeout: 5 });
    }
    await eventually(
      async () => (await auditOf(acct.customerId)).some((a) => a.outcome !== StaffActionOutcome.PENDING),
      20_000,
      200,
    );
  });
});
