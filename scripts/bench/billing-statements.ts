/**
 * Counts the statements and round trips billing sends for one order settled from credit and one
 * invoice pay (issue 13): the handlers run in this process on a postgres.js pool whose `debug`
 * hook records every statement, against a scratch database that is dropped afterwards.
 * `node scripts/bench/billing-statements.ts [orders]` prints the per-operation averages.
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

const N = Number(process.argv[2] ?? 20);
const base = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
const db = new URL(base);
db.pathname = `/hb_stmts_${Date.now().toString(36)}`;
await ensureDatabase(db.toString());
let statements: string[] = [];
const sql = postgres(db.toString(), {
  max: 2,
  onnotice: () => {},
  connection: { search_path: "billing", application_name: "billing" },
  types: {},
  debug: (_conn, query) => statements.push(query.replace(/\s+/g, " ").trim()),
});
const log = createLogger("statements");
try {
  await migrate(
    sql,
    "billing",
    path.join(import.meta.dirname, "../../services/billing/src/db/migrations"),
    log,
  );
  const impl = {
    ...createAccount(sql),
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
  const count = async (label: string, run: (i: number) => Promise<unknown>) => {
    await run(-1); // warm: the first call prepares the statements
    statements = [];
    for (let i = 0; i < N; i++) await run(i);
    const tx = statements.filter((s) => s === "begin" || s === "BEGIN").length;
    const per = statements.length / N;
    process.stdout.write(
      `${label}: ${per} round trips per operation (${(per - (2 * tx) / N).toFixed(1)} statements inside ${tx / N} transaction(s), plus begin/commit)\n`,
    );
    if (process.env.SHOW)
      for (const s of statements.slice(0, per)) process.stdout.write(`  ${s.slice(0, 140)}\n`);
  };
  await count("order settled from credit", () =>
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
    from generate_series(1, ${N + 1}) returning id`;
  await count("invoice pay from credit", (i) =>
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
} finally {
  await sql.end();
  const admin = postgres(base.toString(), { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "${db.pathname.slice(1)}" with (force)`);
  await admin.end();
}
