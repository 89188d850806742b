/**
 * A paid add-on or upgrade invoice puts its change into effect: the add-on starts its own cycle,
 * the upgrade moves the service to its new product (re-pricing an open renewal) or adds the
 * options it bought. An upgrade that nets to a credit is put into effect at once (upgrades.ts).
 */

import { newId, type TxSql } from "@hb/platform";
import { clock } from "./clock.ts";
import { refundPayments } from "./ledger.ts";
import { addCycle, formatMoney, max, money, type Units } from "./money.ts";
import { dispatchPaid, onDocumentPaid } from "./paid-dispatch.ts";
import {
  type DocumentRow,
  type OptionRow,
  type ServiceRow,
  selectServices,
  type UpgradeRow,
} from "./records.ts";
import { recordServices } from "./service-records.ts";
import { cyclePrice, optionCharges, pricedFrom } from "./upgrade-pricing.ts";

/** A paid add-on or upgrade invoice puts its change into effect (registered below). */
async function onAddonOrUpgradePaid(tx: TxSql, ns: string, doc: DocumentRow) {
  const now = clock.now();
  if (doc.purpose === "addon") {
    // The add-on's own cycle starts when it is paid; what was paid is what it can give back.
    const rows = await tx<{ id: string; cycle: string; billing_type: string }[]>`
      select id, cycle, billing_type from service_addons where document_id = ${doc.id} and status = 'pending_payment' for update`;
    for (const a of rows) {
      await tx`update service_addons set status = 'active', paid_amount = amount, period_start = ${now}, started_at = ${now},
        next_due_date = ${a.billing_type === "recurring" ? addCycle(now, a.cycle) : null}, funding_documents = ${[doc.id]}
        where id = ${a.id}`;
    }
  }
  if (doc.purpose === "upgrade") {
    const [u] = await tx<
      UpgradeRow[]
    >`select * from upgrades where document_id = ${doc.id} and status = 'awaiting_payment' for update`;
    if (!u) return;
    await applyUpgrade(tx, ns, u, { optionsDone: false, fundedBy: doc });
    if (u.order_id)
      await tx`update orders set payment_status = 'paid', status = 'active' where id = ${u.order_id}`;
  }
}

/**
 * Adds recurring options to a service, paid up to the service's paid-up date: each holds what was
 * paid for it (`paid`, in the same order), for the period from `from` (the instant it was priced
 * from) to that date, so giving it up returns the unused share of exactly that.
 */
export async function addOptions(
  tx: TxSql,
  s: ServiceRow,
  optionIds: string[],
  paid: Units[],
  from: Date,
  funding: string[],
) {
  for (const [i, optionId] of optionIds.entries()) {
    const [o] = await tx<OptionRow[]>`select * from product_options where id = ${optionId}`;
    const price = cyclePrice(money(o.recurring_price ?? "0"), s.cycle);
    await tx`insert into service_addons (id, service_id, option_id, billing_type, cycle, quantity, amount, status, next_due_date,
                                         paid_amount, period_start, started_at, funding_documents)
      values (${newId()}, ${s.id}, ${optionId}, 'recurring', ${s.cycle}, 1, ${formatMoney(price)}, 'active', ${s.next_due_date},
              ${formatMoney(paid[i] ?? 0n)}, ${from}, ${clock.now()}, ${funding})`;
  }
}

/** `total` split over `weights` in proportion, rounded down, the rest to the last. */
function splitByWeight(total: Units, weights: Units[]): Units[] {
  const sum = weights.reduce((a, b) => a + b, 0n);
  if (sum === 0n) return weights.map((_, i) => (i === weights.length - 1 ? total : 0n));
  const parts = weights.map((w) => (total * w) / sum);
  parts[parts.length - 1] += total - parts.reduce((a, b) => a + b, 0n);
  return parts;
}

/**
 * Puts an upgrade into effect: awaiting_payment → executing → completed. A new product price also
 * re-prices a renewal invoice still open on the service, so paying it charges the new price.
 */
export async function applyUpgrade(
  tx: TxSql,
  ns: string,
  u: UpgradeRow,
  o: { optionsDone: boolean; fundedBy?: DocumentRow },
) {
  await tx`update upgrades set status = 'executing' where id = ${u.id}`;
  const [s] = await selectServices(tx, "s.id = $1 for update of s", [u.service_id]);
  const now = clock.now();
  if (u.kind === "product" && u.to_product_id) {
    const [price] = await tx<{ price: string; name: string }[]>`
      select pp.price, p.name from product_prices pp join products p on p.id = pp.product_id
      where pp.product_id = ${u.to_product_id} and pp.cycle = ${s.cycle}`;
    await tx`update services set product_id = ${u.to_product_id}, amount = ${price.price} where id = ${u.service_id}`;
    await recordServices(tx, ns, [u.service_id]);
    await repriceOpenRenewals(tx, ns, s, { price: money(price.price), plan: price.name });
  } else if (!o.optionsDone) {
    // Removals already took effect when the upgrade was requested. The additions hold what the
    // invoice charged (held from the request, or re-priced to the time left when paid late:
    // upgrade-pricing.ts), split by their prices, for the period that price covers.
    const from = pricedFrom(u.priced_at ?? u.created_at, now);
    const weights = await optionCharges(tx, u.add_options, s.cycle, 1_000_000n);
    const paid = o.fundedBy ? splitByWeight(money(o.fundedBy.total), weights) : weights.map(() => 0n);
    await addOptions(tx, s, u.add_options, paid, from, o.fundedBy ? [o.fundedBy.id] : []);
  }
  await tx`update upgrades set status = 'completed', completed_at = ${now} where id = ${u.id}`;
}

/**
 * Open renewal invoices of a service follow its current plan: the price, and the line's text,
 * which names the plan the term is now on (its dates kept).
 */
async function repriceOpenRenewals(
  tx: TxSql,
  ns: string,
  s: ServiceRow,
  plan: { price: Units; plan: string },
) {
  const { price } = plan;
  const open = await tx<DocumentRow[]>`
    select * from documents where service_id = ${s.id} and purpose = 'renewal' and status = 'unpaid' for update`;
  for (const d of open) {
    const paid = money(d.amount_paid);
    const total = max(price, paid);
    const [line] = await tx<{ description: string }[]>`
      select description from document_lines where document_id = ${d.id} order by id limit 1`;
    // "Renewal of <name> (<cycle>) <from> – <to>": the term's dates stay, the plan is the new one.
    const term = line?.description.match(/\(\w+\) (\S+ – \S+)$/)?.[1];
    const description = `Renewal of ${s.name} on ${plan.plan} (${s.cycle})${term ? ` ${term}` : ""}`;
    await tx`update document_lines set amount = ${formatMoney(price)}, description = ${description}
      where document_id = ${d.id}`;
    await tx`update documents set total = ${formatMoney(total)} where id = ${d.id}`;
    if (paid > price) {
      // Already part-paid beyond the new price: the renewal is settled and the excess goes back.
      await refundPayments(tx, [d.id], paid - price, `Renewal ${d.number} re-priced after a downgrade`);
      await tx`update documents set total = ${formatMoney(price)}, amount_paid = ${formatMoney(price)} where id = ${d.id}`;
    }
    if (paid >= price) {
      const [settled] = await tx<DocumentRow[]>`
        update documents set status = 'paid', paid_at = ${clock.now()} where id = ${d.id} returning *`;
      await dispatchPaid(tx, ns, settled);
    }
  }
}

onDocumentPaid("addon", onAddonOrUpgradePaid);
onDocumentPaid("upgrade", onAddonOrUpgradePaid);
