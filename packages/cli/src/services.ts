import { type ListItem, queryChoices } from "@hosting-platform/sdk";
import { type Command, Option } from "commander";
import type { Runtime } from "./runtime.ts";

type Service = ListItem<"/services">;

// The statuses the API's GET /services filters on (from the contract, through the SDK).
const STATUSES = queryChoices["/services"].status;

export function registerServices(program: Command, rt: Runtime): void {
  const services = program.command("services").description("Every service of the account, of any kind");

  services
    .command("list", { isDefault: true })
    .description("every service (all pages); the default of hb services")
    .addOption(new Option("--status <status>", "only services in this status").choices(STATUSES))
    .action(async (opts: { status?: (typeof STATUSES)[number] }, cmd: Command) => {
      const hb = await rt.client(cmd);
      const rows: Service[] = [];
      for await (const s of hb.paginate("/services", opts.status ? { status: opts.status } : {}))
        rows.push(s);
      rt.print(cmd).list(rows, [
        { header: "ID", value: (s) => s.id },
        { header: "KIND", value: (s) => s.kind },
        { header: "HOSTNAME", value: (s) => s.hostname },
        { header: "STATUS", value: (s) => s.status },
        { header: "PRODUCT", value: (s) => s.product.name },
        { header: "AMOUNT", value: (s) => `${s.billing.amount} ${s.billing.currency}/${s.billing.cycle}` },
      ]);
    });

  services
    .command("show")
    .description("one service with its type-specific detail")
    .argument("<id>", "the service id")
    .action(async (id: string, _opts, cmd: Command) => {
      const hb = await rt.client(cmd);
      const { data } = await hb.get("/services/{id}", { params: { path: { id } } });
      rt.print(cmd).record(data);
    });
}
