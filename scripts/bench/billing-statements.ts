/**
 * Counts the statements and round trips billing sends for one order settled from credit and one
 * invoice pay (issue 13), and for applying compute's reports that the orders' machines are built
 * (one batch of machine events, as the consumer receives them). The handlers run in this process
 * on a postgres.js pool whose `debug` hook records every statement, against a scratch database
 * that is dropped afterwards; round trips are counted on the wire (wire-round-trips.ts).
 * `node scripts/bench/billing-statements.ts [operations]` prints the averages (SHOW=1: and one
 * operation's statements); test/billing-round-trips.test.ts holds them.
 */
import path from "node:path";
import { create } from "@bufbuild/protobuf";
import {
  AdminAdjustCreditRequestSchema,
  AdminCreateProductRequestSchema,
  CreateOrderRequestSchema,
  PayDocumentRequestSchema,
} from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingCycle, ProductKind } from "@hb/contracts/hb/billing/v1/common_pb";
import { DocumentKind } from "@hb/contracts/hb/billing/v1/documents_pb";
import { createLogger, ensureDatabase, migrate, newId } from "@hb/platform";
import postgres from "postgres";
import { createAccount } from "../../services/billing/src/account.ts";
import { createCatalogue } from "../../services/billing/src/catalogue.ts";
import { createDocumentHandlers } from "../../services/billing/src/document-handlers.ts";
import { createOrders } from "../../services/billing/src/orders.ts";
import { applyMachineEvents } from "../../services/billing/src/provisioning.ts";
import { countWireRoundTrips } from "./wire-round-trips.ts";

export interface Count {
  /** Per operation. */
  roundTrips: number;
  statements: number;
  transactions: number;
  /** One operation's statements, whitespace collapsed. */
  sample: string[];
}

/**
 * Runs `n` orders settled from credit and `n` invoice pays (each with an Idempotency-Key), then
 * applies the `n` orders' build reports (less three for the warm-up) as one batch (`builds` counts that batch, not each report).
 */
export async function countBillingStatements(
  n: number,
  databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
): Promise<{ order: Count; pay: Count; builds: Count }> {
  const db = new URL(databaseUrl);
  db.pathname = `/hb_stmts_${Date.now().toString(36)}${process.pid.toString(36)}`;
  await ensureDatabase(db.toString());
  let statements: string[] = [];
  const wire = countWireRoundTrips();
  const sql = postgres(db.toString(), {
    max: 2,
    onnotice: () => {},
    connection: { search_path: "billing", application_name: "billing" },
    types: {},
    debug: (_conn, query) => {
      // Numbered by the round trip that carries it (its describe, if any, comes before).
      statements.push(`${wire.count + 1} ${query.replace(/\s+/g, " ").trim()}`);
    },
  });
  try {
    await migrate(
      sql,
      "billing",
      path.join(import.meta.dirname, "../../services/billing/src/db/migrations"),
      createLogger("statements"),
    );
    const impl = {
      // No auth here: every account is the person's own, in EUR.
      ...createAccount(sql, async () => ({ currency: "EUR", personBelongs: true })),
      ...createCatalogue(sql),
      ...createOrders(sql, "stmts"),
      ...createDocumentHandlers(sql, "stmts"),
    } as Record<string, (req: unknown) => Promise<unknown>>;
    const { product } = (await impl.adminCreateProduct(
      create(AdminCreateProductRequestSchema, {
        name: "Statements",
        kind: ProductKind.GAME,
        prices: [{ cycle: BillingCycle.MONTHLY, price: { currency: "EUR", amount: "1" } }],
        currency: "EUR",
      }),
    )) as { product: { id: string } };
    const customerId = newId();
    const personId = newId();
    await impl.adminAdjustCredit(
      create(AdminAdjustCreditRequestSchema, { personId, customerId, amount: "100000", currency: "EUR" }),
    );
    const caller = { customerId, personId, currency: "EUR" };
    const count = async (run: (i: number) => Promise<unknown>, times = n): Promise<Count> => {
      await run(-1); // warm: the first call prepares the statements
      // Let the warm-up's last tick close before counting.
      await new Promise((r) => setImmediate(r));
      statements = [];
      wire.reset();
      for (let i = 0; i < times; i++) await run(i);
      const per = statements.length / times;
      return {
        roundTrips: wire.count / times,
        statements: per,
        transactions: statements.filter((s) => /^\d+ begin$/i.test(s)).length / times,
        sample: statements.slice(0, per),
      };
    };
    const order = await count(() =>
      impl.createOrder(
        create(CreateOrderRequestSchema, {
          caller,
          items: [{ productId: product.id, billingCycle: BillingCycle.MONTHLY }],
          idempotencyKey: newId(),
          requestHash: "h",
        }),
      ),
    );
    const invoices = await sql<{ id: string }[]>`
      insert into billing.documents (id, kind, number, customer_id, person_id, total, currency, purpose)
      select gen_random_uuid(), 'invoice', 'INV-S-' || gen_random_uuid(), ${customerId}, ${personId}, 1, 'EUR', 'manual'
      from generate_series(1, ${n + 1}) returning id`;
    const pay = await count((i) =>
      impl.payDocument(
        create(PayDocumentRequestSchema, {
          caller,
          kind: DocumentKind.INVOICE,
          documentId: invoices[i + 1].id,
          idempotencyKey: newId(),
          requestHash: "h",
        }),
      ),
    );
    // The orders' services, as the provisioner leaves them once compute has taken them.
    const building = await sql<{ id: string }[]>`
      update billing.services set status = 'installing' where status = 'pending' returning id`;
    const reports = building.map((b, i) => ({
      eventId: newId(),
      serviceId: b.id,
      success: true,
      serverIp: `10.0.0.${i + 1}`,
      hostname: `built-${i}`,
      error: "",
    }));
    // Warm each of the pool's two connections with a report alone (a statement is prepared per
    // connection), then count the batch of the rest.
    await Promise.all([
      applyMachineEvents(sql, "stmts", reports.slice(0, 1)),
      applyMachineEvents(sql, "stmts", reports.slice(1, 2)),
    ]);
    const builds = await count(
      (i) => applyMachineEvents(sql, "stmts", i < 0 ? reports.slice(2, 3) : reports.slice(3)),
      1,
    );
    return { order, pay, builds };
  } finally {
    wire.stop();
    await sql.end();
    const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists "${db.pathname.slice(1)}" with (force)`);
    await admin.end();
  }
}

if (import.meta.main) {
  const result = await countBillingStatements(Number(process.argv[2] ?? 20));
  for (const [label, c] of [
    ["order settled from credit", result.order],
    ["invoice pay from credit", result.pay],
    [`a batch of the orders' build reports (divide by the batch for one report)`, result.builds],
  ] as const) {
    process.stdout.write(
      `${label}: ${c.roundTrips} round trips per operation, ${c.statements} statements in ${c.transactions} transaction(s), begin and commit included\n`,
    );
    if (process.env.SHOW) for (const s of c.sample) process.stdout.write(`  ${s.slice(0, 140)}\n`);
  }
}
