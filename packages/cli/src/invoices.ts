import { type ListItem, queryChoices } from "@hosting-platform/sdk";
import { type Command, Option } from "commander";
import type { Runtime } from "./runtime.ts";

type Invoice = ListItem<"/invoices">;

export function registerInvoices(program: Command, rt: Runtime): void {
  const invoices = program.command("invoices").description("Invoices, and paying them from credit");

  invoices
    .command("list")
    .description("the account's invoices (all pages)")
    .addOption(
      new Option("--status <status>", "only invoices in this status").choices(
        queryChoices["/invoices"].status,
      ),
    )
    .action(async (opts: { status?: (typeof queryChoices)["/invoices"]["status"][number] }, cmd: Command) => {
      const hb = await rt.client(cmd);
      const rows: Invoice[] = [];
      for await (const i of hb.paginate("/invoices", opts.status ? { status: opts.status } : {}))
        rows.push(i);
      rt.print(cmd).list(rows, [
        { header: "ID", value: (i) => i.id },
        { header: "NUMBER", value: (i) => i.invoice_number },
        { header: "STATUS", value: (i) => i.status },
        { header: "TOTAL", value: (i) => `${i.total} ${i.currency}` },
        { header: "DUE", value: (i) => `${i.amount_due} ${i.currency}` },
        { header: "PURPOSE", value: (i) => i.purpose },
        { header: "DUE DATE", value: (i) => i.due_date?.slice(0, 10) },
      ]);
    });

  invoices
    .command("show")
    .description("one invoice with its line items")
    .argument("<id>", "the invoice id")
    .action(async (id: string, _opts, cmd: Command) => {
      const hb = await rt.client(cmd);
      const { data } = await hb.get("/invoices/{id}", { params: { path: { id } } });
      rt.print(cmd).record(data);
    });

  invoices
    .command("pay")
    .description(
      "pay an invoice from credit, in full or in part (safe to repeat: one Idempotency-Key per call)",
    )
    .argument("<id>", "the invoice id")
    .option("--amount <amount>", "pay only this much (a decimal, at most 4 places), e.g. 5 or 12.50")
    .option(
      "--idempotency-key <key>",
      "repeat a call safely: the same key and amount within 24 hours answers the first result",
    )
    .action(async (id: string, opts: { amount?: string; idempotencyKey?: string }, cmd: Command) => {
      const hb = await rt.client(cmd);
      // The amount travels as the decimal string typed, never through a float; the API reads it
      // (one rule for every client) and refuses a bad one naming amount, exit status 1.
      const result = await hb.post("/invoices/{id}/pay", {
        params: { path: { id } },
        body: opts.amount === undefined ? {} : { amount: opts.amount },
        headers: opts.idempotencyKey ? { "Idempotency-Key": opts.idempotencyKey } : {},
      });
      rt.print(cmd).record(result.data);
    });
}
