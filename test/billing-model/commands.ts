/**
 * The commands of the invariant test: plain records (so fast-check shrinks them well) generated
 * by `sequenceArb`, each carried out as real API calls by `execute`. Targets are indexes into what
 * earlier commands created, taken modulo what exists; a command with nothing to act on does
 * nothing. Refusals (4xx) are expected; a 5xx is a violation.
 */
import { ServiceActionSchema } from "@hb/contracts/hb/billing/v1/services_pb";
import { enumFromWord, resolveError } from "@hb/platform";
import fc from "fast-check";
import { deliver } from "../support/stripe-stand-in.ts";
import { at, type CallOptions, idemKey, type Reply, str } from "./driver.ts";
import type { Violation } from "./invariants.ts";
import type { DocView, RunModel, ServiceView } from "./model.ts";
import { addCycle, fmt, scale, share, type Units } from "./money.ts";
import type { OptionDef, Person } from "./world.ts";

/** Wanted cycle; a product that offers only hourly is ordered hourly. */
type Cycle = "monthly" | "annually";
type Action = "suspend" | "unsuspend" | "terminate";

export type Cmd =
  | { t: "order"; a: number; product: number; cycle: Cycle; copies: number; idem: boolean; items: number }
  | {
      t: "addon";
      a: number;
      svc: number;
      opt: number;
      type: "recurring" | "one_time";
      cycle: "monthly" | "quarterly" | "annually";
      qty: number;
    }
  | { t: "rmAddon"; a: number; svc: number; opt: number }
  | { t: "options"; a: number; svc: number; add: number[]; remove: number[] }
  | { t: "upgrade"; a: number; svc: number; to: number }
  | { t: "cancelUpgrade"; a: number; up: number }
  | { t: "renew"; a: number; svc: number; pay: boolean }
  | { t: "pay"; a: number; doc: number; percent: number; asString: boolean; copies: number; idem: boolean }
  | { t: "cancel"; a: number; svc: number; immediate: boolean }
  | { t: "withdraw"; a: number; svc: number }
  | { t: "rOrder"; ext: number; product: number; mode: "credit" | "invoice"; copies: number }
  | { t: "rState"; svc: number; action: Action }
  | { t: "staff"; svc: number; action: Action }
  | { t: "topUp"; p: number; amount: number; wrongCurrency: boolean }
  | {
      t: "cardTopUp";
      p: number;
      amount: number;
      /** How the payment's two events arrive: in order, the other way round, or all at once. */
      order: "inOrder" | "reversed" | "together";
      /** How often each event is delivered (Stripe retries until it hears 2xx). */
      replays: number;
      /** Percent of the payment refunded afterwards (0: none); the refund event comes twice. */
      refund: number;
    }
  | { t: "bankTopUp"; p: number; amount: number; received: number; confirms: number }
  /** A staff credit sent `copies` times with one key (a double click, a retry after a timeout). */
  | { t: "deskCredit"; p: number; amount: number; copies: number; together: boolean }
  | { t: "advance"; unit: "hours" | "days" | "months"; n: number };

/** Six customer-side people (owner, member × 3 customers); index 6 is the partner's owner. */
const PEOPLE = 6;
// Mostly the first customer's owner, then its member, so a sequence keeps acting on what it
// created; sometimes anyone.
const actor = fc.oneof(
  { weight: 6, arbitrary: fc.constant(0) },
  { weight: 2, arbitrary: fc.constant(1) },
  { weight: 2, arbitrary: fc.nat({ max: PEOPLE - 1 }) },
);
const target = fc.nat({ max: 7 });
const PRODUCT_ANY = 8;
const copies = (max: number) =>
  fc.oneof({ weight: 4, arbitrary: fc.constant(1) }, fc.integer({ min: 2, max }));

export function describe(c: Cmd): string {
  const who = (a: number) => (a === PEOPLE ? "partner" : `${a % 2 === 0 ? "owner" : "member"}${a >> 1}`);
  switch (c.t) {
    case "order":
      return `order ${who(c.a)} product#${c.product} ${c.cycle}${c.items > 1 ? ` (${c.items} items)` : ""}${c.copies > 1 ? ` ×${c.copies}` : ""}${c.idem ? " idem" : ""}`;
    case "addon":
      return `buy add-on ${who(c.a)} svc#${c.svc} opt#${c.opt} ${c.type}${c.type === "recurring" ? ` ${c.cycle}` : ""} qty ${c.qty}`;
    case "rmAddon":
      return `DELETE add-on ${who(c.a)} svc#${c.svc} opt#${c.opt}`;
    case "options":
      return `options ${who(c.a)} svc#${c.svc} add [${c.add}] remove [${c.remove}]`;
    case "upgrade":
      return `upgrade ${who(c.a)} svc#${c.svc} → product#${c.to}`;
    case "cancelUpgrade":
      return `cancel upgrade ${who(c.a)} upgrade#${c.up}`;
    case "renew":
      return `renew ${who(c.a)} svc#${c.svc}${c.pay ? " and pay it" : ""}`;
    case "pay":
      return `pay ${who(c.a)} doc#${c.doc} ${c.percent === 100 ? "in full" : `${c.percent}%`}${c.asString ? " (string)" : ""}${c.copies > 1 ? ` ×${c.copies}` : ""}${c.idem ? " idem" : ""}`;
    case "cancel":
      return `cancel ${who(c.a)} svc#${c.svc} ${c.immediate ? "immediately" : "at end of term"}`;
    case "withdraw":
      return `withdraw cancellation ${who(c.a)} svc#${c.svc}`;
    case "rOrder":
      return `reseller order ext#${c.ext} product#${c.product} ${c.mode}${c.copies > 1 ? ` ×${c.copies} concurrent` : ""}`;
    case "rState":
      return `reseller ${c.action} svc#${c.svc}`;
    case "staff":
      return `staff ${c.action} svc#${c.svc}`;
    case "topUp":
      return `staff top-up ${who(c.p)} ${c.amount}${c.wrongCurrency ? " in the other currency" : ""}`;
    case "cardTopUp":
      return `card top-up ${who(c.p)} ${c.amount} events ${c.order} ×${c.replays}${c.refund ? `, ${c.refund}% refunded` : ""}`;
    case "bankTopUp":
      return `bank transfer ${who(c.p)} ${c.amount}, ${c.received} received, confirmed ×${c.confirms}`;
    case "deskCredit":
      return `desk credit ${who(c.p)} ${c.amount} ×${c.copies} with one key${c.together ? " at once" : ""}`;
    case "advance":
      return `clock +${c.n} ${c.unit}`;
  }
}

const withText = (c: Cmd): Cmd => Object.assign(c, { [fc.toStringMethod]: () => describe(c) });

export function commandArbs(productCount: number): { order: fc.Arbitrary<Cmd>; any: fc.Arbitrary<Cmd> } {
  // Below PRODUCT_ANY: a product in the actor's currency; from it on: any product (currencies cross).
  const product = fc.oneof(
    { weight: 4, arbitrary: fc.nat({ max: PRODUCT_ANY - 1 }) },
    fc.integer({ min: PRODUCT_ANY, max: PRODUCT_ANY + productCount - 1 }),
  );
  const order = fc.record({
    t: fc.constant("order" as const),
    a: actor,
    product,
    cycle: fc.constantFrom<Cycle>("annually", "monthly"),
    copies: copies(4),
    idem: fc.boolean(),
    items: fc.oneof({ weight: 3, arbitrary: fc.constant(1) }, fc.constant(2)),
  });
  const cmd = fc.oneof(
    { weight: 4, arbitrary: order },
    {
      weight: 5,
      arbitrary: fc.record({
        t: fc.constant("addon" as const),
        a: actor,
        svc: target,
        opt: fc.nat({ max: 2 }),
        type: fc.constantFrom("recurring" as const, "one_time" as const),
        cycle: fc.constantFrom("monthly" as const, "quarterly" as const, "annually" as const),
        qty: fc.integer({ min: 1, max: 2 }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        t: fc.constant("rmAddon" as const),
        a: actor,
        svc: target,
        opt: fc.nat({ max: 2 }),
      }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        t: fc.constant("options" as const),
        a: actor,
        svc: target,
        add: fc.array(fc.nat({ max: 2 }), { maxLength: 2 }),
        remove: fc.array(fc.nat({ max: 2 }), { maxLength: 2 }),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({ t: fc.constant("upgrade" as const), a: actor, svc: target, to: product }),
    },
    { weight: 1, arbitrary: fc.record({ t: fc.constant("cancelUpgrade" as const), a: actor, up: target }) },
    {
      weight: 4,
      arbitrary: fc.record({ t: fc.constant("renew" as const), a: actor, svc: target, pay: fc.boolean() }),
    },
    {
      weight: 6,
      arbitrary: fc.record({
        t: fc.constant("pay" as const),
        a: fc.oneof({ weight: 3, arbitrary: actor }, fc.nat({ max: PEOPLE })),
        doc: target,
        percent: fc.oneof({ weight: 3, arbitrary: fc.constant(100) }, fc.integer({ min: 1, max: 99 })),
        asString: fc.boolean(),
        copies: copies(4),
        idem: fc.boolean(),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        t: fc.constant("cancel" as const),
        a: actor,
        svc: target,
        immediate: fc.boolean(),
      }),
    },
    { weight: 1, arbitrary: fc.record({ t: fc.constant("withdraw" as const), a: actor, svc: target }) },
    {
      weight: 3,
      arbitrary: fc.record({
        t: fc.constant("rOrder" as const),
        ext: fc.nat({ max: 2 }),
        product,
        mode: fc.constantFrom("credit" as const, "invoice" as const),
        copies: copies(6),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        t: fc.constant("rState" as const),
        svc: target,
        action: fc.constantFrom<Action>("suspend", "unsuspend", "terminate"),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        t: fc.constant("staff" as const),
        svc: target,
        action: fc.constantFrom<Action>("suspend", "unsuspend", "terminate"),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        t: fc.constant("topUp" as const),
        p: fc.nat({ max: PEOPLE }),
        amount: fc.integer({ min: 5, max: 300 }),
        wrongCurrency: fc.oneof({ weight: 6, arbitrary: fc.constant(false) }, fc.constant(true)),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        t: fc.constant("cardTopUp" as const),
        p: fc.nat({ max: PEOPLE }),
        amount: fc.integer({ min: 5, max: 300 }),
        order: fc.constantFrom("inOrder" as const, "reversed" as const, "together" as const),
        replays: fc.integer({ min: 1, max: 3 }),
        refund: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 100 })),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        t: fc.constant("bankTopUp" as const),
        p: fc.nat({ max: PEOPLE }),
        amount: fc.integer({ min: 5, max: 300 }),
        received: fc.integer({ min: 1, max: 400 }),
        confirms: fc.integer({ min: 1, max: 3 }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        t: fc.constant("deskCredit" as const),
        p: fc.nat({ max: PEOPLE }),
        amount: fc.integer({ min: 1, max: 300 }),
        copies: fc.integer({ min: 1, max: 3 }),
        together: fc.boolean(),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        t: fc.constant("advance" as const),
        unit: fc.constantFrom("hours" as const, "days" as const, "months" as const),
        n: fc.integer({ min: 1, max: 14 }),
      }),
    },
  );
  return { order: order.map(withText), any: cmd.map(withText) };
}

/** A sequence: one to three orders first (so later commands have services to act on), then anything. */
export function sequenceArb(productCount: number, maxCommands: number, keep: (c: Cmd) => boolean) {
  const { order, any } = commandArbs(productCount);
  return fc
    .tuple(
      fc.array(order.filter(keep), { minLength: 1, maxLength: 3 }),
      fc.array(any.filter(keep), { maxLength: Math.max(0, maxCommands - 1), size: "max" }),
    )
    .map(([first, rest]) => [...first, ...rest]);
}

/** The portal's caller for a person: the permissions a signed-in payer holds. */
const callerOf = (p: Person) => ({
  customerId: p.customerId,
  personId: p.personId,
  permissions: ["pay_invoices"],
  currency: p.currency,
});

const pick = <T>(list: T[], i: number): T | undefined =>
  list.length === 0 ? undefined : list[i % list.length];

interface Ctx {
  m: RunModel;
  out: Violation[];
  /** One line per HTTP call, for the failure report. */
  notes: string[];
}

function person(m: RunModel, a: number): Person {
  return a >= PEOPLE ? m.actors.partner : m.actors.people[a % PEOPLE];
}

/** For a removal: the actor's active services holding add-ons the model knows, else any. */
function serviceWithAddons(m: RunModel, p: Person, i: number): ServiceView | undefined {
  const holding = m
    .servicesOf(p.customerId)
    .filter((s) => s.status === "active" && m.addons.some((a) => a.serviceId === s.id && !a.ended));
  return pick(holding, i) ?? serviceFor(m, p, i);
}

/** Options to remove: those the service holds (as far as the model knows), else all offered. */
function removable(m: RunModel, serviceId: string, offered: OptionDef[]): OptionDef[] {
  const held = offered.filter((o) =>
    m.addons.some((a) => a.serviceId === serviceId && a.optionId === o.id && !a.ended),
  );
  return held.length > 0 ? held : offered;
}

/** The actor's services, active ones first choice (those the money rules act on). */
function serviceFor(m: RunModel, p: Person, i: number): ServiceView | undefined {
  const all = m.servicesOf(p.customerId);
  const active = all.filter((s) => s.status === "active");
  return pick(active.length > 0 ? active : all, i);
}

async function call(
  ctx: Ctx,
  p: Person,
  method: string,
  path: string,
  opts: CallOptions = {},
): Promise<Reply> {
  const r = await ctx.m.w.http(method, path, p.key, opts);
  ctx.notes.push(
    `${p.label} ${method} ${path} → ${r.status}${r.status >= 400 ? ` ${r.text.slice(0, 160)}` : ""}`,
  );
  if (r.status >= 500)
    ctx.out.push({ invariant: "no 5xx", detail: `${method} ${path}: ${r.status} ${r.text.slice(0, 300)}` });
  return r;
}

async function concurrently(n: number, f: () => Promise<Reply>): Promise<Reply[]> {
  return Promise.all(Array.from({ length: n }, f));
}

async function admin(ctx: Ctx, what: string, f: () => Promise<unknown>): Promise<boolean> {
  try {
    await f();
    ctx.notes.push(`${what} → ok`);
    return true;
  } catch (err) {
    const r = resolveError(err);
    ctx.notes.push(`${what} → ${r.status} ${r.code} ${r.message}`);
    if (r.status >= 500) ctx.out.push({ invariant: "no 5xx", detail: `${what}: ${r.code} ${r.message}` });
    return false;
  }
}

const tolerance = 2n; // 0.0002

/**
 * The most an add-on may give back when removed at `now`: nothing for a one-time add-on; what is
 * kept on its invoice when not paid in full; otherwise what was paid × the unused share of its
 * own period (taken from the latest start the model allows).
 */
async function removalBound(m: RunModel, svc: ServiceView, optionId: string, now: Date): Promise<Units> {
  let bound = 0n;
  const known = m.addons.filter((a) => a.serviceId === svc.id && a.optionId === optionId && !a.ended);
  for (const a of known) {
    const doc = m.docs.get(a.invoiceId);
    const paid = await m.netPaid([a.invoiceId]);
    if (doc?.status !== "paid") {
      bound += paid;
      continue;
    }
    if (a.billingType !== "recurring") continue;
    const end = addCycle(a.startedBy, a.cycle);
    const left = Math.max(0, end.getTime() - now.getTime()) / (end.getTime() - a.startedBy.getTime());
    bound += scale(paid, Math.min(1, left));
  }
  // Renewals of the add-on paid ahead: at most all of it back.
  bound += await m.addonRenewalsKept(svc.id, optionId);
  if (known.length === 0) {
    // Added through an options upgrade: never more than was paid for the service's upgrades.
    const docs = [...m.docs.values()].filter((d) => d.serviceId === svc.id && d.purpose === "upgrade");
    bound += await m.netPaid(docs.map((d) => d.id));
  }
  return bound + tolerance;
}

/** A catalogue product: one in the actor's currency, or any (always the former when the run keeps to one currency). */
function productFor(m: RunModel, p: Person, i: number) {
  const all = m.w.products;
  const mine = all.filter((x) => x.currency === p.currency);
  return m.sameCurrency || i < PRODUCT_ANY ? mine[i % mine.length] : all[(i - PRODUCT_ANY) % all.length];
}

function endAddons(m: RunModel, serviceId: string, optionIds: string[]) {
  for (const a of m.addons) if (a.serviceId === serviceId && optionIds.includes(a.optionId)) a.ended = true;
}

export async function execute(m: RunModel, c: Cmd): Promise<{ violations: Violation[]; notes: string[] }> {
  const ctx: Ctx = { m, out: [], notes: [] };
  const w = m.w;
  const clock = w.clock;
  const ledgerBefore = await m.lastLedgerId();
  switch (c.t) {
    case "order": {
      const p = person(m, c.a);
      const prod = productFor(m, p, c.product);
      const key = c.idem ? idemKey() : undefined;
      const cycle = prod.prices[c.cycle] === undefined ? Object.keys(prod.prices)[0] : c.cycle;
      ctx.notes.push(`(${prod.label}, ${cycle})`);
      const replies = await concurrently(c.copies, () =>
        call(ctx, p, "POST", "/orders", {
          // Several items share one document: a part-payment then covers some of them.
          body:
            c.items > 1
              ? {
                  items: Array.from({ length: c.items }, () => ({ productId: prod.id, billingCycle: cycle })),
                }
              : { productId: prod.id, billingCycle: cycle },
          idempotencyKey: key,
        }),
      );
      if (replies.some((r) => r.status === 201) && prod.currency !== p.currency)
        ctx.out.push({
          invariant: "nothing crosses currencies",
          detail: `a ${p.currency} account ordered ${prod.label} priced in ${prod.currency}: 201`,
        });
      break;
    }
    case "addon": {
      const p = person(m, c.a);
      const svc = serviceFor(m, p, c.svc);
      const prod = svc && w.products.find((x) => x.id === svc.productId);
      const opt = prod && pick(prod.options, c.opt);
      if (!svc || !opt) break;
      const lo = clock.lo();
      const r = await call(ctx, p, "POST", `/services/${svc.id}/options`, {
        body: {
          optionId: opt.id,
          billingType: c.type,
          ...(c.type === "recurring" ? { billingCycle: c.cycle } : {}),
          quantity: c.qty,
        },
      });
      const invoiceId = str(at(r.body, "data", "invoice", "id"));
      if (r.status === 201 && invoiceId)
        m.addons.push({
          serviceId: svc.id,
          optionId: opt.id,
          invoiceId,
          billingType: c.type,
          cycle: c.type === "recurring" ? c.cycle : "monthly",
          startedBy: at(r.body, "data", "settled") === true ? clock.hi() : lo,
          ended: false,
        });
      break;
    }
    case "rmAddon": {
      const p = person(m, c.a);
      const svc = serviceWithAddons(m, p, c.svc);
      const prod = svc && w.products.find((x) => x.id === svc.productId);
      const opt = prod && pick(removable(m, svc.id, prod.options), c.opt);
      if (!svc || !opt) break;
      const bound = await removalBound(m, svc, opt.id, clock.lo());
      const r = await call(ctx, p, "DELETE", `/services/${svc.id}/options/${opt.id}`);
      const credit = await m.creditsSince(ledgerBefore);
      if (credit > bound)
        ctx.out.push({
          invariant: "add-on removal <= paid × unused share",
          detail: `removing ${opt.name} from ${svc.id} gave back ${fmt(credit)}, at most ${fmt(bound)}`,
        });
      if (r.status < 300) endAddons(m, svc.id, [opt.id]);
      break;
    }
    case "options": {
      const p = person(m, c.a);
      const svc = c.remove.length > 0 ? serviceWithAddons(m, p, c.svc) : serviceFor(m, p, c.svc);
      const prod = svc && w.products.find((x) => x.id === svc.productId);
      if (!svc || !prod || prod.options.length === 0) break;
      const ids = (from: OptionDef[], xs: number[]) => [...new Set(xs.map((i) => from[i % from.length].id))];
      const remove = ids(removable(m, svc.id, prod.options), c.remove);
      const add = ids(prod.options, c.add).filter((o) => !remove.includes(o));
      if (add.length + remove.length === 0) break;
      let bound = 0n;
      const now = clock.lo();
      for (const o of remove) bound += await removalBound(m, svc, o, now);
      const r = await call(ctx, p, "POST", `/services/${svc.id}/upgrades/options`, {
        body: { addOptions: add, removeOptions: remove },
      });
      const id = str(at(r.body, "data", "id"));
      if (id) m.upgrades.push({ id, customerId: p.customerId });
      const credit = await m.creditsSince(ledgerBefore);
      if (credit > bound)
        ctx.out.push({
          invariant: "add-on removal <= paid × unused share",
          detail: `options change on ${svc.id} (remove ${remove.length}, add ${add.length}) gave back ${fmt(credit)}, at most ${fmt(bound)}`,
        });
      if (r.status < 300) endAddons(m, svc.id, remove);
      break;
    }
    case "upgrade": {
      const p = person(m, c.a);
      const svc = serviceFor(m, p, c.svc);
      const to = productFor(m, p, c.to);
      if (!svc) break;
      ctx.notes.push(`(→ ${to.label})`);
      const paidUntil = m.paidUntil.get(svc.id) ?? svc.nextDue;
      const lo = clock.lo();
      const r = await call(ctx, p, "POST", `/services/${svc.id}/upgrades`, { body: { toProductId: to.id } });
      const hi = clock.hi();
      const id = str(at(r.body, "data", "id"));
      if (id) m.upgrades.push({ id, customerId: p.customerId });
      if (r.status !== 201) break;
      if (to.currency !== svc.currency)
        ctx.out.push({
          invariant: "nothing crosses currencies",
          detail: `upgrade of a ${p.currency} service to ${to.label} (${to.currency}) accepted`,
        });
      const newPrice = to.prices[svc.cycle];
      if (newPrice === undefined) break;
      const diff = newPrice - svc.amount;
      const anchor = m.anchorDay.get(svc.id);
      const a = scale(diff, share(hi, paidUntil, svc.cycle, anchor));
      const b = scale(diff, share(lo, paidUntil, svc.cycle, anchor));
      const [min, max] = a < b ? [a, b] : [b, a];
      const total = at(r.body, "data", "document", "total");
      const range = `${fmt(min)} … ${fmt(max)} (price ${fmt(svc.amount)} → ${fmt(newPrice)}, paid until ${paidUntil.toISOString()})`;
      if (typeof total === "number") {
        const charged = BigInt(Math.round(total * 10_000));
        if (charged < min - tolerance || charged > max + tolerance)
          ctx.out.push({
            invariant: "upgrade = (new − old) × share(now, paidUntil)",
            detail: `service ${svc.id}: invoice ${fmt(charged)}, expected ${range}`,
          });
      } else if (min > tolerance) {
        ctx.out.push({
          invariant: "upgrade = (new − old) × share(now, paidUntil)",
          detail: `service ${svc.id}: completed without a document, expected a charge of ${range}`,
        });
      } else {
        const credit = await m.creditsSince(ledgerBefore);
        if (credit > -min + tolerance)
          ctx.out.push({
            invariant: "downgrade refund <= (old − new) × share",
            detail: `service ${svc.id}: gave back ${fmt(credit)}, at most ${fmt(-min)}`,
          });
      }
      break;
    }
    case "cancelUpgrade": {
      const p = person(m, c.a);
      const u = pick(
        m.upgrades.filter((x) => x.customerId === p.customerId),
        c.up,
      );
      if (u) await call(ctx, p, "POST", `/upgrades/${u.id}/cancel`);
      break;
    }
    case "renew": {
      const p = person(m, c.a);
      const svc = serviceFor(m, p, c.svc);
      if (!svc) break;
      const r = await call(ctx, p, "POST", `/services/${svc.id}/renew`);
      const invoice = str(at(r.body, "data", "invoice", "id"));
      // Renewing and paying ahead at once, as a customer who pays years in advance does.
      if (c.pay && invoice) await call(ctx, p, "POST", `/invoices/${invoice}/pay`, { body: {} });
      break;
    }
    case "pay": {
      const p = person(m, c.a);
      const doc: DocView | undefined = pick(m.docsOf(p.customerId), c.doc);
      if (!doc) break;
      const due = doc.total - doc.amountPaid;
      let opts: CallOptions = { body: {} };
      if (c.percent < 100 && due > 1n) {
        const part = (due * BigInt(c.percent)) / 100n || 1n;
        opts = c.asString
          ? { rawBody: `{"amount":"${fmt(part)}"}` }
          : { body: { amount: Number(fmt(part)) } };
      }
      const key = c.idem ? idemKey() : undefined;
      await concurrently(c.copies, () =>
        call(ctx, p, "POST", `/${doc.kind}s/${doc.id}/pay`, { ...opts, idempotencyKey: key }),
      );
      break;
    }
    case "cancel": {
      const p = person(m, c.a);
      const svc = serviceFor(m, p, c.svc);
      if (!svc) break;
      const paidUntil = m.paidUntil.get(svc.id) ?? svc.nextDue;
      const now = clock.lo();
      // The most an immediate cancellation may give back: the unused share of the service, of
      // its add-ons, and whatever was paid on its open documents.
      let bound =
        svc.cycle === "hourly"
          ? 0n
          : scale(svc.amount, share(now, paidUntil, svc.cycle, m.anchorDay.get(svc.id))) + tolerance;
      const prod = w.products.find((x) => x.id === svc.productId);
      for (const o of prod?.options ?? []) bound += await removalBound(m, svc, o.id, now);
      const open = [...m.docs.values()].filter((d) => d.serviceId === svc.id && d.status === "unpaid");
      // Paid on a renewal of a term that will not come: given back, by either kind of cancellation.
      const paidOnOpen = await m.netPaid(open.map((d) => d.id));
      bound += paidOnOpen;
      if (c.immediate) m.revenue.refundingEnds.add(svc.id);
      const r = await call(ctx, p, "POST", `/services/${svc.id}/cancel`, {
        body: { reason: "invariants", immediate: c.immediate },
      });
      const credit = await m.creditsSince(ledgerBefore);
      if (c.immediate && credit > bound)
        ctx.out.push({
          invariant: "cancellation refund <= unused share",
          detail: `cancelling ${svc.id} gave back ${fmt(credit)}, at most ${fmt(bound)}`,
        });
      if (!c.immediate && credit > paidOnOpen)
        ctx.out.push({
          invariant: "end-of-term cancellation refunds nothing but part-payments of its open renewals",
          detail: `gave back ${fmt(credit)}, of which ${fmt(paidOnOpen)} was paid on open documents`,
        });
      if (r.status < 300 && c.immediate)
        endAddons(
          m,
          svc.id,
          (prod?.options ?? []).map((o) => o.id),
        );
      break;
    }
    case "withdraw": {
      const p = person(m, c.a);
      const svc = serviceFor(m, p, c.svc);
      if (svc) await call(ctx, p, "DELETE", `/services/${svc.id}/cancel`);
      break;
    }
    case "rOrder": {
      const p = m.actors.partner;
      const prod = productFor(m, p, c.product);
      const ext = `${p.customerId.slice(0, 8)}-ext-${c.ext}`;
      const replies = await concurrently(c.copies, () =>
        call(ctx, p, "POST", "/reseller/orders", {
          body: {
            externalOrderId: ext,
            externalCustomerId: "end-customer",
            paymentMode: c.mode,
            items: [{ productId: prod.id, billingCycle: prod.prices.monthly ? "monthly" : "hourly" }],
          },
          signWith: p.secret,
        }),
      );
      const seen = m.external.get(ext) ?? new Set<string>();
      for (const r of replies) {
        const id = str(at(r.body, "data", "id"));
        if (r.status === 201 && id) seen.add(id);
      }
      m.external.set(ext, seen);
      if (seen.size > 1)
        ctx.out.push({
          invariant: "external order id charged at most once",
          detail: `"${ext}" accepted ${seen.size} times (orders ${[...seen].join(", ")})`,
        });
      break;
    }
    case "rState": {
      const p = m.actors.partner;
      const svc = pick(m.servicesOf(p.customerId), c.svc);
      if (svc && c.action === "terminate") m.revenue.refundingEnds.add(svc.id);
      if (svc)
        await call(ctx, p, "POST", `/reseller/services/${svc.id}/${c.action}`, {
          body: {},
          signWith: p.secret,
        });
      break;
    }
    case "staff": {
      const svc = pick([...m.services.values()], c.svc);
      if (!svc) break;
      const ok = await admin(ctx, `staff ${c.action} ${svc.id}`, () =>
        w.billing.adminSetServiceState({
          serviceId: svc.id,
          action: enumFromWord(ServiceActionSchema, c.action),
          reason: "staff",
        }),
      );
      // The supplier's suspension of a live service holds whoever else suspended it first
      // (refused or not: a refusal that drops it is the defect this catches).
      if (c.action === "suspend" && ["active", "suspended"].includes(svc.status)) m.supplierHeld.add(svc.id);
      if (ok && c.action !== "suspend") m.supplierHeld.delete(svc.id);
      break;
    }
    case "topUp": {
      const p = person(m, c.p);
      const wrong = c.wrongCurrency && !m.sameCurrency;
      const currency = wrong ? (p.currency === "EUR" ? "USD" : "EUR") : p.currency;
      const ok = await admin(ctx, `top-up ${p.label} ${c.amount} ${currency}`, () =>
        w.billing.adminAdjustCredit({
          personId: p.personId,
          customerId: p.customerId,
          amount: String(c.amount),
          currency,
          description: "invariants",
        }),
      );
      if (ok) {
        m.added.set(p.personId, (m.added.get(p.personId) ?? 0n) + BigInt(c.amount) * 10_000n);
        if (wrong)
          ctx.out.push({
            invariant: "nothing crosses currencies",
            detail: `staff credit in ${currency} accepted for a ${p.currency} account`,
          });
      }
      break;
    }
    case "cardTopUp": {
      const stripe = w.stripe;
      if (!stripe) {
        ctx.notes.push("no card provider in this world: skipped");
        break;
      }
      const p = person(m, c.p);
      const started = await w.topUps
        .startCardTopUp({
          caller: callerOf(p),
          amount: String(c.amount),
          successUrl: "http://127.0.0.1/portal/add-credit/{TOP_UP_ID}/return?result=paid",
          cancelUrl: "http://127.0.0.1/portal/add-credit/{TOP_UP_ID}/return?result=cancelled",
          idempotencyKey: idemKey(),
        })
        .catch((err: unknown) => {
          const r = resolveError(err);
          ctx.notes.push(`start card top-up ${p.label} → ${r.code} ${r.message}`);
          if (r.status >= 500) ctx.out.push({ invariant: "no 5xx", detail: `StartCardTopUp: ${r.message}` });
          return undefined;
        });
      const id = started?.topUp?.id;
      const session = [...stripe.sessions.values()].find((x) => x.metadata.top_up_id === id);
      if (!id || !session) break;
      const { completed, succeeded } = stripe.pay(session.id);
      const pair = c.order === "reversed" ? [succeeded, completed] : [completed, succeeded];
      const deliveries = pair.flatMap((e) => Array.from({ length: c.replays }, () => e));
      const statuses =
        c.order === "together"
          ? await Promise.all(deliveries.map((e) => deliver(w.gatewayUrl, e)))
          : await deliveries.reduce(
              async (acc, e) => [...(await acc), await deliver(w.gatewayUrl, e)],
              Promise.resolve([] as Awaited<ReturnType<typeof deliver>>[]),
            );
      ctx.notes.push(`events → ${statuses.map((r) => r.status).join(" ")}`);
      if (statuses.some((r) => r.status !== 200))
        ctx.out.push({ invariant: "no 5xx", detail: `webhook answered ${statuses.map((r) => r.status)}` });
      const paid = BigInt(c.amount) * 10_000n;
      m.added.set(p.personId, (m.added.get(p.personId) ?? 0n) + paid);
      m.toppedUp.set(p.personId, (m.toppedUp.get(p.personId) ?? 0n) + paid);
      if (c.refund > 0) {
        const refunded = Math.floor((c.amount * 100 * c.refund) / 100);
        const e = stripe.refund(session.id, refunded);
        const r = [await deliver(w.gatewayUrl, e), await deliver(w.gatewayUrl, e)];
        ctx.notes.push(`refund ${refunded / 100} → ${r.map((x) => x.status).join(" ")}`);
        m.refunded.set(p.personId, (m.refunded.get(p.personId) ?? 0n) + BigInt(refunded) * 100n);
      }
      break;
    }
    case "bankTopUp": {
      const p = person(m, c.p);
      const asked = await w.topUps
        .requestBankTransfer({ caller: callerOf(p), amount: String(c.amount), idempotencyKey: idemKey() })
        .catch((err: unknown) => {
          const r = resolveError(err);
          ctx.notes.push(`bank transfer ${p.label} → ${r.code} ${r.message}`);
          if (r.status >= 500)
            ctx.out.push({ invariant: "no 5xx", detail: `RequestBankTransfer: ${r.message}` });
          return undefined;
        });
      const reference = asked?.topUp?.reference;
      if (!reference) break;
      const outcomes = await Promise.all(
        Array.from({ length: c.confirms }, () =>
          admin(ctx, `confirm ${reference} ${c.received}`, () =>
            w.topUpStaff.confirmBankTransfer({
              reference,
              receivedAmount: String(c.received),
              staffId: "00000000-0000-0000-0000-000000000001",
              // The bank may bring more than was asked; the model confirms it as an overpayment.
              aboveRequested: true,
            }),
          ),
        ),
      );
      const credited = outcomes.filter(Boolean).length;
      if (credited !== 1)
        ctx.out.push({
          invariant: "a top-up credits once",
          detail: `${reference} confirmed ${credited} times`,
        });
      if (credited > 0) {
        const got = BigInt(c.received) * 10_000n;
        m.added.set(p.personId, (m.added.get(p.personId) ?? 0n) + got);
        m.toppedUp.set(p.personId, (m.toppedUp.get(p.personId) ?? 0n) + got);
      }
      break;
    }
    case "deskCredit": {
      const p = person(m, c.p);
      const req = {
        customerId: p.customerId,
        personId: p.personId,
        amount: String(c.amount),
        reason: "invariants desk",
        idempotencyKey: idemKey(),
      };
      // Every answer names the ledger entry it made or found: one key, one entry.
      const ids = new Set<string>();
      const send = () =>
        admin(ctx, `desk credit ${p.label} ${c.amount}`, async () => {
          ids.add(String((await w.desk.deskAdjustCredit(req)).transactionId));
        });
      if (c.together) await Promise.all(Array.from({ length: c.copies }, send));
      else for (let i = 0; i < c.copies; i++) await send();
      if (ids.size > 1)
        ctx.out.push({
          invariant: "a staff write retried with its key credits once",
          detail: `${c.copies} copies made ${ids.size} ledger entries`,
        });
      if (ids.size > 0) m.added.set(p.personId, (m.added.get(p.personId) ?? 0n) + BigInt(c.amount) * 10_000n);
      break;
    }
    case "advance": {
      const seconds = c.n * { hours: 3_600, days: 86_400, months: 30 * 86_400 }[c.unit];
      try {
        const moved = await clock.advance(seconds);
        ctx.notes.push(moved ? `clock → ${clock.hi().toISOString()}` : "clock control unavailable: skipped");
      } catch (err) {
        const r = resolveError(err);
        ctx.notes.push(`advance clock → ${r.code} ${r.message}`);
        if (r.status >= 500) ctx.out.push({ invariant: "no 5xx", detail: `AdminAdvanceClock: ${r.message}` });
      }
      break;
    }
  }
  return { violations: ctx.out, notes: ctx.notes };
}
