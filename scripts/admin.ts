/**
 * The admin command: `npm run admin -- <group> <action> [args] [--flags]`. It goes through the
 * services' gRPC APIs, the same path the portal and admin panel take, and prints JSON.
 */
import { resolveError } from "@hb/platform";
import { authCommands } from "./admin/auth.ts";
import { billingCommands } from "./admin/billing.ts";
import { type CommandGroup, type Flags, plain, UsageError } from "./admin/common.ts";
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

function parse(argv: string[]): { words: string[]; flags: Flags } {
  const words: string[] = [];
  const flags: Flags = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      if (eq > 0) flags[a.slice(2, eq)] = a.slice(eq + 1);
      else if (i + 1 < argv.length && !argv[i + 1].startsWith("--")) flags[a.slice(2)] = argv[++i];
      else flags[a.slice(2)] = true;
    } else words.push(a);
  }
  return { words, flags };
}

function usage(): string {
  return [
    "Usage: npm run admin -- <command> [--flags]   (prints JSON)",
    "",
    ...groups.flatMap((g) => g.usage.map((u) => `  ${u}`)),
  ].join("\n");
}

async function main() {
  const { words, flags } = parse(process.argv.slice(2));
  const name = words.slice(0, 2).join(" ");
  const command = groups.map((g) => g.commands[name]).find(Boolean);
  if (!command || flags.help) {
    process.stderr.write(`${usage()}\n`);
    process.exit(command || words.length === 0 ? 0 : 2);
  }
  const result = await command(words.slice(2), flags);
  process.stdout.write(`${JSON.stringify(plain(result), null, 2)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n\n${usage()}\n`);
      process.exit(2);
    }
    const r = resolveError(err);
    process.stderr.write(
      `${JSON.stringify({ success: false, code: r.code, error: r.message, details: r.info?.violations.map((v) => ({ field: v.field, message: v.message })) })}\n`,
    );
    process.exit(1);
  },
);
