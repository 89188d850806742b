/**
 * What the model knows about one run: the actors, the money staff added, what the API created
 * (services, documents, add-ons, upgrades, external order ids) and each service's paid-up date,
 * tracked from the order time and paid renewals and compared with billing's next_due_date.
 */

import type { Violation } from "./invariants.ts";
import { addCycle, type Units, units } from "./money.ts";
import { RevenueBook } from "./revenue.ts";
import type { Actors, World } from "./world.ts";

/** Billing's default grace before an unpaid service is suspended (the test keeps the defaults). */
const GRACE_DAYS = 3;

export interface ServiceView {
  id: string;
  customerId: string;
  partner: boolean;
  status: string;
  cycle: string;
  amount: Units;
  productId: string;
  currency: string;
  nextDue: Date;
}

export interface DocView {
  id: string;
  customerId: string;
  kind: "invoice" | "proforma";
  status: string;
  purpose: string;
  serviceId: string | null;
  total: Units;
  amountPaid: Units;
}

/** An add-on bought with POST /services/{id}/options, with what the model knows of its period. */
export interface AddonModel {
  serviceId: string;
  optionId: string;
  invoiceId: string;
  billingType: string;
  cycle: string;
  /** Latest time its paid period can have started (purchase, or payment when paid later). */
  startedBy: Date;
  ended: boolean;
}

export class RunModel {
  readonly added = new Map<string, Units>();
  /** Per person: what top-ups (card or bank transfer) credited, each once. */
  readonly toppedUp = new Map<string, Units>();
  /** Per person: what the card provider reported refunded. */
  readonly refunded = new Map<string, Units>();
  services = new Map<string, ServiceView>();
  docs = new Map<string, DocView>();
  readonly addons: AddonModel[] = [];
  readonly upgrades: { id: string; customerId: string }[] = [];
  /** Distinct order ids the API answered 201 with, per external order id. */
  readonly external = new Map<string, Set<string>>();
  /** Expected paid-up date per service (absent for hourly services). */
  readonly paidUntil = new Map<string, Date>();
  /** Each service's anchor day: the day of month its first term started (its payment). */
  readonly anchorDay = new Map<string, number>();
  /** Only products in the actor's own currency (to look past a currency defect to others). */
  sameCurrency = false;
  /** Services staff suspended and have not lifted: only staff may make them active again. */
  readonly supplierHeld = new Set<string>();
  /** Revenue follows time: what is kept for each service against the time it provided. */
  readonly revenue = new RevenueBook();

  readonly w: World;
  readonly actors: Actors;
  constructor(w: World, actors: Actors) {
    this.w = w;
    this.actors = actors;
  }

  get customerIds() {
    return this.actors.customers.map((c) => c.customerId);
  }

  servicesOf(customerId: string): ServiceView[] {
    return [...this.services.values()].filter((s) => s.customerId === customerId);
  }

  docsOf(customerId: string): DocView[] {
    const all = [...this.docs.values()].filter((d) => d.customerId === customerId);
    const open = all.filter((d) => d.status === "unpaid");
    return open.length > 0 ? open : all;
  }

  /**
   * Re-reads services and documents of the run, and checks the paid-up dates: paying for an order
   * makes it the payment time + one cycle; a renewal paid in full moves it one cycle further.
   * [stepLo, stepHi] brackets billing's clock during the step just run.
   */
  async refresh(stepLo: Date, stepHi: Date): Promise<Violation[]> {
    const out: Violation[] = [];
    const sql = this.w.sql;
    const ids = this.customerIds;
    const svcRows = await sql<
      {
        id: string;
        customer_id: string;
        partner_id: string | null;
        status: string;
        cycle: string;
        amount: string;
        product_id: string;
        currency: string;
        next_due_date: Date;
      }[]
    >`select id, customer_id, partner_id, status, cycle, amount::text, product_id, currency, next_due_date
      from services where customer_id = any(${ids}::uuid[]) order by created_at, id`;
    const docRows = await sql<
      {
        id: string;
        customer_id: string;
        kind: "invoice" | "proforma";
        status: string;
        purpose: string;
        service_id: string | null;
        total: string;
        amount_paid: string;
        kept: string;
        converted: boolean;
      }[]
    >`select d.id, d.customer_id, d.kind, d.status, d.purpose, d.service_id, d.total::text, d.amount_paid::text,
        (select coalesce(-sum(l.amount), 0) from ledger l
         where l.document_id = d.id and l.kind in ('payment', 'refund'))::text as kept,
        exists (select 1 from documents p where p.converted_to = d.id) as converted
      from documents d where d.customer_id = any(${ids}::uuid[]) order by d.created_at, d.id`;
    const docs = new Map<string, DocView>();
    for (const d of docRows) {
      const before = this.docs.get(d.id);
      const view: DocView = {
        id: d.id,
        customerId: d.customer_id,
        kind: d.kind,
        status: d.status,
        purpose: d.purpose,
        serviceId: d.service_id,
        total: units(d.total),
        amountPaid: units(d.amount_paid),
      };
      docs.set(d.id, view);
      const newlyPaid = d.status === "paid" && before?.status !== "paid";
      // What was kept when it became paid (its own payments less refunds; an invoice a proforma
      // became is paid through the proforma, checked there).
      if (newlyPaid && !d.converted && units(d.kept) < units(d.total))
        out.push({
          invariant: "no document paid while less than its total was kept",
          detail: `${d.kind} ${d.id} (${d.purpose}) marked paid: ${d.kept} kept of ${d.total}`,
        });
      if (newlyPaid && d.purpose === "renewal" && d.service_id) {
        const svc = svcRows.find((s) => s.id === d.service_id);
        const until = this.paidUntil.get(d.service_id);
        if (svc && until)
          this.paidUntil.set(d.service_id, addCycle(until, svc.cycle, this.anchorDay.get(d.service_id)));
      }
      if (newlyPaid && d.purpose === "addon") {
        for (const a of this.addons) if (a.invoiceId === d.id) a.startedBy = stepHi;
      }
    }
    this.docs = docs;
    const services = new Map<string, ServiceView>();
    for (const s of svcRows) {
      services.set(s.id, {
        id: s.id,
        customerId: s.customer_id,
        partner: s.partner_id !== null,
        status: s.status,
        cycle: s.cycle,
        amount: units(s.amount),
        productId: s.product_id,
        currency: s.currency,
        nextDue: s.next_due_date,
      });
      if (s.cycle === "hourly" || ["pending_payment", "terminated", "cancelled"].includes(s.status)) continue;
      const until = this.paidUntil.get(s.id);
      if (!until) {
        // Paid in this step (with its order, or its order's document later): one cycle from then.
        const lo = addCycle(stepLo, s.cycle);
        const hi = addCycle(stepHi, s.cycle);
        if (s.next_due_date < lo || s.next_due_date > hi)
          out.push({
            invariant: "paid-up date = payment time + one cycle",
            detail: `service ${s.id}: next_due_date ${s.next_due_date.toISOString()}, expected within ${lo.toISOString()} … ${hi.toISOString()}`,
          });
        this.paidUntil.set(s.id, s.next_due_date);
        // Paid within the step: its day, unless the step spans midnight (then the service's own
        // first due date says it, unless clamped).
        const day =
          stepLo.getUTCDate() === stepHi.getUTCDate() ? stepHi.getUTCDate() : s.next_due_date.getUTCDate();
        this.anchorDay.set(s.id, day);
        continue;
      }
      if (until.getTime() !== s.next_due_date.getTime())
        out.push({
          invariant: "paid-up date moves one cycle per paid renewal",
          detail: `service ${s.id}: next_due_date ${s.next_due_date.toISOString()}, model ${until.toISOString()}`,
        });
    }
    this.services = services;
    // Billing's time is at least the model clock's lower bound read now, after the step.
    out.push(...this.cycleViolations(svcRows, docRows, this.w.clock.lo()));
    out.push(...(await this.revenue.check(sql, ids, stepLo, this.w.clock.hi())));
    return out;
  }

  /**
   * Every active recurring service is paid up to now, or inside its grace with its renewal open;
   * a service the supplier suspended is active again only once the supplier lifted it.
   */
  private cycleViolations(
    svcRows: { id: string; status: string; cycle: string; next_due_date: Date }[],
    docRows: { service_id: string | null; purpose: string; status: string }[],
    lo: Date,
  ): Violation[] {
    const out: Violation[] = [];
    for (const s of svcRows) {
      if (s.status === "terminated") this.supplierHeld.delete(s.id);
      if (this.supplierHeld.has(s.id) && s.status === "active")
        out.push({
          invariant: "a supplier suspension is lifted only by the supplier",
          detail: `service ${s.id} is active while the supplier's suspension was never lifted by staff`,
        });
      if (s.status !== "active" || s.cycle === "hourly" || s.next_due_date > lo) continue;
      const open = docRows.some(
        (d) => d.service_id === s.id && d.purpose === "renewal" && d.status === "unpaid",
      );
      const graceEnd = new Date(s.next_due_date.getTime() + GRACE_DAYS * 86_400_000);
      if (!open || graceEnd <= lo)
        out.push({
          invariant: "active service paid up, or in its grace with the renewal open",
          detail: `service ${s.id} active, paid up to ${s.next_due_date.toISOString()} (now ≥ ${lo.toISOString()}), renewal ${open ? "open past the grace" : "not open"}`,
        });
    }
    return out;
  }

  /** Waits (bounded) until no service of the run is still being provisioned. */
  async settle(deadlineMs = 5_000): Promise<void> {
    const until = Date.now() + deadlineMs;
    while (Date.now() < until) {
      const [{ n }] = await this.w.sql<{ n: number }[]>`
        select count(*)::int as n from services where customer_id = any(${this.customerIds}::uuid[])
          and status in ('pending', 'installing')`;
      if (n === 0) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Positive ledger amounts of the run after ledger id `after` (what a step gave back). */
  async creditsSince(after: bigint): Promise<Units> {
    const [r] = await this.w.sql<{ sum: string }[]>`
      select coalesce(sum(amount), 0)::text as sum from ledger
      where customer_id = any(${this.customerIds}::uuid[]) and id > ${after.toString()} and amount > 0`;
    return units(r.sum);
  }

  async lastLedgerId(): Promise<bigint> {
    const [r] = await this.w.sql<{ id: string }[]>`select coalesce(max(id), 0)::text as id from ledger`;
    return BigInt(r.id);
  }

  /** What was kept on the renewals of one add-on of a service (from billing's renewal records). */
  async addonRenewalsKept(serviceId: string, optionId: string): Promise<Units> {
    const [r] = await this.w.sql<{ sum: string }[]>`
      select coalesce(-sum(l.amount), 0)::text as sum from ledger l
      join renewal_terms t on t.document_id = l.document_id
      join service_addons a on a.id = t.addon_id
      where a.service_id = ${serviceId} and a.option_id = ${optionId} and l.kind in ('payment', 'refund')`;
    return units(r.sum);
  }

  /** What is still kept on a document by whoever paid it (payments less refunds). */
  async netPaid(documentIds: string[]): Promise<Units> {
    if (documentIds.length === 0) return 0n;
    const [r] = await this.w.sql<{ sum: string }[]>`
      select coalesce(-sum(amount), 0)::text as sum from ledger
      where document_id = any(${documentIds}::uuid[]) and kind in ('payment', 'refund')`;
    return units(r.sum);
  }
}
