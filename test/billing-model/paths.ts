/**
 * Issue 28 §6: properties of billing over time, at the edge (HTTP and the staff RPCs), with the
 * model's own calendar arithmetic (money.ts) as the oracle.
 *
 * - path independence: a scenario (services ordered, then stretches of time each followed by a
 *   top-up) is run twice, the clock moved in one step per stretch and in many short steps; both
 *   end with the same balance, documents, service states and partner events. Billing's clock only
 *   moves forward, so the second run starts four years after the first (eight across 2100, which
 *   has no leap day: `sameCalendarLater`), on the same calendar, and dates are compared by their
 *   place in it;
 * - anchors: after any number of renewals, the n-th due date of a service is its first term's
 *   start + n cycles, clamped to the month's end;
 * - late credit: after credit lands (and the pass it wakes), no open renewal of the account is
 *   covered by its balance.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { ServiceAction } from "@hb/contracts/hb/billing/v1/services_pb";
import { EventSchema } from "@hb/contracts/hb/events/v1/events_pb";
import fc from "fast-check";
import { eventually } from "../support/eventually.ts";
import { at, str } from "./driver.ts";
import { MONTHS, sameCalendarLater, shiftMonths, units } from "./money.ts";
import type { World } from "./world.ts";

const DAY_S = 86_400;

export interface PathScenario {
  /** The day of month the first run starts on (0: wherever the clock stands), to reach month ends. */
  startOn: number;
  credit: number;
  /** Index into the world's EUR products (0–2) and the cycle ordered. */
  services: { product: number; cycle: "monthly" | "annually" }[];
  /** Each stretch of time, then credit added (0: none). */
  stretches: { days: number; topUp: number }[];
  /** The short steps' length, in days, for the run in many steps. */
  step: number;
}

export const pathScenarioArb: fc.Arbitrary<PathScenario> = fc.record({
  startOn: fc.constantFrom(0, 29, 30, 31),
  credit: fc.integer({ min: 0, max: 400 }),
  services: fc.array(
    fc.record({ product: fc.integer({ min: 0, max: 2 }), cycle: fc.constantFrom("monthly", "annually") }),
    { minLength: 1, maxLength: 3 },
  ),
  stretches: fc.array(
    fc.record({ days: fc.integer({ min: 1, max: 150 }), topUp: fc.constantFrom(0, 0, 10, 25, 60, 150) }),
    { minLength: 1, maxLength: 3 },
  ),
  step: fc.integer({ min: 5, max: 20 }),
});

/**
 * The issue's own findings: 1000 credit, a monthly service ordered on a 31st, 400 days; and a
 * top-up once suspended.
 */
export const PATH_EXAMPLES: PathScenario[] = [
  {
    startOn: 31,
    credit: 1000,
    services: [{ product: 0, cycle: "monthly" }],
    stretches: [{ days: 400, topUp: 0 }],
    step: 10,
  },
  {
    startOn: 0,
    credit: 10,
    services: [{ product: 0, cycle: "monthly" }],
    stretches: [
      { days: 36, topUp: 25 },
      { days: 40, topUp: 0 },
    ],
    step: 4,
  },
];

interface Outcome {
  balance: string;
  services: { status: string; nextDue: string; events: string[] }[];
  documents: string[];
}

export class PathBroken extends Error {}

/** Runs the scenario both ways and checks the three properties; throws PathBroken when one fails. */
export async function checkPaths(w: World, sc: PathScenario): Promise<void> {
  if (sc.startOn > 0) await moveToDay(w, sc.startOn);
  const start = await billingNow(w);
  const once = await runScenario(w, sc, false, start);
  // The second run starts on the same calendar, four (or eight) years after the first started.
  const now = await billingNow(w);
  const target = sameCalendarLater(start).getTime();
  let left = Math.ceil((target - now.getTime()) / 1000);
  while (left > 0) {
    const s = Math.min(left, 3 * 365 * DAY_S);
    await w.clock.advance(s);
    left -= s;
  }
  const inSteps = await runScenario(w, sc, true, await billingNow(w));
  const a = JSON.stringify(once.outcome, null, 1);
  const b = JSON.stringify(inSteps.outcome, null, 1);
  // FUZZ_TRACE=1 shows what each run ended with (to see which rules a scenario reached).
  if (process.env.FUZZ_TRACE) process.stdout.write(`--- paths ${JSON.stringify(sc)}\n${a}\n`);
  if (a !== b)
    throw new PathBroken(
      `path independence: one step per stretch and ${sc.step}-day steps differ for ${JSON.stringify(sc)}\none step: ${a}\nin steps: ${b}`,
    );
}

/** Moves billing's clock to the next day `day` of a month (one that has it), at the same time of day. */
async function moveToDay(w: World, day: number) {
  const now = await billingNow(w);
  for (let m = 0; m < 14; m++) {
    const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + m, day, 12));
    if (d.getUTCDate() !== day || d <= now) continue;
    await w.clock.advance(Math.ceil((d.getTime() - now.getTime()) / 1000));
    return;
  }
}

async function billingNow(w: World): Promise<Date> {
  await w.clock.advance(0);
  return w.clock.hi();
}

async function runScenario(w: World, sc: PathScenario, split: boolean, start: Date) {
  const eur = w.products.filter((p) => p.currency === "EUR" && p.prices.monthly !== undefined);
  const run = `${process.pid}-${Date.now().toString(36)}-${split ? "s" : "o"}`;
  const { customer, owner } = await w.auth.createCustomer({
    name: "Paths",
    email: `paths-${run}@example.test`,
    company: "Paths Co",
    country: "DE",
    currency: "EUR",
  });
  const customerId = customer!.id;
  const personId = owner!.id;
  const key = (
    await w.auth.createKey({
      personId,
      label: "paths",
      scopes: ["services", "orders", "billing"],
      ipAllowlist: "",
    })
  ).secretKey;
  const credit = async (amount: number) => {
    if (amount > 0)
      await w.billing.adminAdjustCredit({ personId, customerId, amount: String(amount), currency: "EUR" });
  };
  await credit(sc.credit);
  const ids: string[] = [];
  for (const s of sc.services) {
    const r = await w.http("POST", "/orders", key, {
      body: { productId: eur[s.product].id, billingCycle: s.cycle },
    });
    if (r.status !== 201) throw new PathBroken(`order refused: ${r.text}`);
    ids.push(str(at(r.body, "data", "services", 0, "id")) ?? "");
  }
  // Paid orders' services are built before time moves; unpaid ones stay waiting for payment.
  await eventually(async () => {
    const rows = await w.sql<
      { status: string }[]
    >`select status from services where id = any(${ids}::uuid[])`;
    return rows.every((r) => !["pending", "installing"].includes(r.status));
  }, 20_000);
  for (const st of sc.stretches) {
    if (split) {
      for (let d = 0; d < st.days; d += sc.step)
        await w.clock.advance(Math.min(sc.step, st.days - d) * DAY_S);
    } else await w.clock.advance(st.days * DAY_S);
    if (st.topUp > 0) {
      await credit(st.topUp);
      // The credit wakes a pass; a clock move of 0 runs one and answers when it is done.
      await w.clock.advance(0);
      await lateCreditPaid(w, customerId, personId);
    }
  }
  await anchorsHold(w, ids);
  const outcome = await outcomeOf(w, customerId, personId, ids, start);
  // Ended, so the four years to the next run cost the due pass nothing.
  for (const id of ids)
    await w.billing
      .adminSetServiceState({ serviceId: id, action: ServiceAction.TERMINATE, reason: "end of run" })
      .catch(() => {});
  return { outcome };
}

/** Late credit: once it landed and the pass ran, no open renewal is covered by the balance. */
async function lateCreditPaid(w: World, customerId: string, personId: string) {
  const [b] = await w.sql<
    { balance: string }[]
  >`select balance::text from balances where person_id = ${personId}`;
  const open = await w.sql<{ id: string; total: string; amount_paid: string }[]>`
    select d.id, d.total::text, d.amount_paid::text from documents d
    where d.customer_id = ${customerId} and d.status = 'unpaid' and d.purpose in ('renewal', 'addon')`;
  const covered = open.filter((d) => units(d.total) - units(d.amount_paid) <= units(b?.balance ?? "0"));
  if (covered.length > 0)
    throw new PathBroken(
      `late credit: balance ${b?.balance} covers open renewal(s) ${covered.map((d) => `${d.id} (${d.total})`).join(", ")}`,
    );
}

/** Anchors: the k-th renewal is due on the first term's start + k cycles, clamped. */
async function anchorsHold(w: World, ids: string[]) {
  for (const id of ids) {
    const [s] = await w.sql<{ cycle: string; next_due_date: Date; paid_at: Date | null; status: string }[]>`
      select s.cycle, s.next_due_date, s.status,
        (select min(d.paid_at) from documents d where d.order_id = s.order_id and d.status in ('paid', 'converted')) as paid_at
      from services s where s.id = ${id}`;
    if (!s?.paid_at) continue;
    const dues = await w.sql<{ due_date: Date }[]>`
      select r.term_start as due_date from renewal_terms r where r.item_id = ${id} order by r.term_start`;
    const months = MONTHS[s.cycle] ?? 1;
    const day = (d: Date) => d.toISOString().slice(0, 10);
    for (const [i, r] of dues.entries()) {
      const expected = shiftMonths(s.paid_at, months * (i + 1));
      if (day(r.due_date) !== day(expected))
        throw new PathBroken(
          `anchors: service ${id} (${s.cycle}, first term ${s.paid_at.toISOString()}): term ${i + 1} due ${day(r.due_date)}, expected ${day(expected)}`,
        );
    }
  }
}

/** What a run ends with, dates written as their place in the calendar from the run's start year. */
async function outcomeOf(
  w: World,
  customerId: string,
  personId: string,
  ids: string[],
  start: Date,
): Promise<Outcome> {
  const y0 = start.getUTCFullYear();
  const date = (d: Date) => `Y+${d.getUTCFullYear() - y0}-${d.toISOString().slice(5, 10)}`;
  const [b] = await w.sql<
    { balance: string }[]
  >`select balance::text from balances where person_id = ${personId}`;
  const docs = await w.sql<
    {
      purpose: string;
      status: string;
      total: string;
      amount_paid: string;
      due_date: Date | null;
      service_id: string | null;
    }[]
  >`
    select purpose, status, total::text, amount_paid::text, due_date, service_id from documents
    where customer_id = ${customerId} and purpose in ('renewal', 'addon')
    order by service_id, due_date, total`;
  const events = await w.sql<{ payload: Buffer }[]>`
    select payload from outbox where subject like '%.events.%' order by created_at, id`;
  const decoded = events
    .map((e) => {
      try {
        return fromBinary(EventSchema, new Uint8Array(e.payload));
      } catch {
        return undefined;
      }
    })
    .filter((e) => e?.payload.case === "service");
  const services: Outcome["services"] = [];
  for (const id of ids) {
    const [s] = await w.sql<{ status: string; next_due_date: Date }[]>`
      select status, next_due_date from services where id = ${id}`;
    services.push({
      status: s.status,
      nextDue: date(s.next_due_date),
      events: decoded
        .filter((e) => e?.payload.case === "service" && e.payload.value.serviceId === id)
        .map((e) => `${e?.type}:${e?.payload.case === "service" ? e.payload.value.reason : ""}`),
    });
  }
  return {
    balance: b?.balance ?? "0",
    services,
    documents: docs.map(
      (d) =>
        `${ids.indexOf(d.service_id ?? "")} ${d.purpose} ${d.status} ${d.total} paid ${d.amount_paid} due ${d.due_date ? date(d.due_date) : "-"}`,
    ),
  };
}

/** The property: both runs of any scenario agree, and anchors and late credit hold in each. */
export const pathProperty = (w: World) => fc.asyncProperty(pathScenarioArb, (sc) => checkPaths(w, sc));
