import { Command, Option } from "commander";
import { registerCompletion } from "./completion.ts";
import { registerContexts } from "./contexts.ts";
import { registerInvoices } from "./invoices.ts";
import { registerJobs } from "./jobs.ts";
import { registerOrders } from "./orders.ts";
import type { Runtime } from "./runtime.ts";
import { registerServices } from "./services.ts";
import { registerSshKeys } from "./ssh-keys.ts";
import { registerVps } from "./vps.ts";
import { registerWebhooks } from "./webhooks.ts";

const VERSION = "0.1.0";

/** Every command of hb. A new group is one file exporting register<Group>(program, rt), added here. */
export function buildProgram(rt: Runtime): Command {
  const program = new Command("hb")
    .description(
      "The hosting platform's customer command line. The API and key come from --context, else HB_API_URL and HB_API_KEY, else the current context (hb context add).",
    )
    .version(VERSION)
    .addOption(
      new Option("-o, --output <format>", "how results are printed")
        .choices(["table", "json"])
        .default("table"),
    )
    .option("--context <name>", "use this context instead of the environment or the current one")
    .showHelpAfterError("(add --help for usage)")
    .showSuggestionAfterError(true)
    .addHelpText(
      "after",
      "\nExit status: 0 done; 1 refused by the API (its error envelope on stderr); 2 usage error;\n3 a job or provisioning failed; 4 a wait timed out.",
    )
    .configureOutput({ writeOut: rt.out, writeErr: rt.err });

  for (const register of [
    registerContexts,
    registerVps,
    registerServices,
    registerOrders,
    registerInvoices,
    registerSshKeys,
    registerJobs,
    registerWebhooks,
  ]) {
    register(program, rt);
  }
  registerCompletion(program, rt.out);

  // Every command reports usage errors the same way (status 2) and shares the output streams.
  const all = (c: Command): Command[] => [c, ...c.commands.flatMap(all)];
  for (const c of all(program)) {
    c.exitOverride().configureOutput({ writeOut: rt.out, writeErr: rt.err });
    if (c !== program) c.showHelpAfterError("(add --help for usage)").showSuggestionAfterError(true);
  }
  return program;
}
