/**
 * The admin command: `npm run admin -- <command> [<arguments>] [--flags]`. It goes through the
 * services' gRPC APIs, the same path the portal and admin panel take, and prints JSON.
 * Exit status: 0 done, 1 refused by a service, 2 usage error (unknown command or flag, bad value).
 */
import { resolveError } from "@hb/platform";
import { authCommands } from "./admin/auth.ts";
import { billingCommands } from "./admin/billing.ts";
import { describeRefusal, parseCommandLine } from "./admin/cli.ts";
import { type Command, type CommandGroup, plain, UsageError } from "./admin/common.ts";
import { computeCommands } from "./admin/compute.ts";
import { seedCommands } from "./admin/seed.ts";
import { webhookCommands } from "./admin/webhooks.ts";

const groups: CommandGroup[] = [
  authCommands,
  billingCommands,
  computeCommands,
  webhookCommands,
  seedCommands,
];

let running: Command | undefined;

async function main() {
  const parsed = parseCommandLine(groups, process.argv.slice(2));
  if (parsed.kind === "help") {
    process.stdout.write(`${parsed.text}\n`);
    return;
  }
  running = parsed.command;
  const result = await parsed.command.run(parsed.args, parsed.flags);
  process.stdout.write(`${JSON.stringify(plain(result), null, 2)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`${JSON.stringify(describeRefusal(resolveError(err), running))}\n`);
    process.exit(1);
  },
);
