/**
 * The admin command's parser and help, both made from the commands' declarations (common.ts), so
 * the usage text cannot drift from what is accepted. Flags are parsed by node:util parseArgs in
 * strict mode: an unknown flag, a missing value or a value given to a switch is refused.
 */
import { parseArgs } from "node:util";
import type { ResolvedError } from "@hb/platform";
import { type Command, type CommandGroup, type FlagSpec, UsageError } from "./common.ts";

const TOOL = "npm run admin --";

export type Parsed =
  | { kind: "help"; text: string }
  | {
      kind: "run";
      name: string;
      command: Command;
      args: string[];
      flags: Record<string, string | number | boolean | undefined>;
    };

/** Finds the command in argv (its words come first), then parses its arguments and flags. */
export function parseCommandLine(groups: CommandGroup[], argv: string[]): Parsed {
  const all = new Map(groups.flatMap((g) => Object.entries(g.commands)));
  const lead: string[] = [];
  for (const a of argv) {
    if (a.startsWith("-")) break;
    lead.push(a);
  }
  const wantsHelp = argv.includes("--help") || argv.includes("-h");
  if (lead.length === 0 || (lead.length === 1 && lead[0] === "help")) {
    if (wantsHelp || lead[0] === "help") return { kind: "help", text: toolHelp(groups) };
    throw new UsageError(`No command given.\n\n${toolHelp(groups)}`);
  }
  let name = "";
  for (let n = Math.min(3, lead.length); n > 0 && !name; n--) {
    const candidate = lead.slice(0, n).join(" ");
    if (all.has(candidate)) name = candidate;
  }
  if (!name) {
    const typed = lead.slice(0, 3).join(" ");
    const family = [...all.keys()].filter((k) => k.startsWith(`${lead[0]} `));
    if (lead.length === 1 && family.length > 0) {
      const text = `Commands under "${lead[0]}":\n${commandList(family.map((k) => [k, all.get(k)!]))}`;
      if (wantsHelp) return { kind: "help", text };
      throw new UsageError(`"${lead[0]}" needs a command after it.\n\n${text}`);
    }
    const near = closest(typed, [...all.keys()], (k, t) =>
      t.split(" ").slice(0, k.split(" ").length).join(" "),
    );
    throw new UsageError(
      `Unknown command "${typed}".${near ? ` Did you mean "${near}"?` : ""}\n` +
        `"${TOOL} --help" lists the commands.`,
    );
  }
  const command = all.get(name)!;
  const rest = argv.slice(name.split(" ").length);
  if (wantsHelp) return { kind: "help", text: commandHelp(name, command) };
  return { kind: "run", name, command, ...parseFlags(name, command, rest) };
}

function parseFlags(name: string, command: Command, argv: string[]) {
  const options = Object.fromEntries(
    Object.entries(command.flags).map(([flag, spec]) => [
      flag,
      { type: spec.type === "boolean" ? ("boolean" as const) : ("string" as const) },
    ]),
  );
  const seeHelp = `"${TOOL} ${name} --help" shows its usage.`;
  let parsed: ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({
      args: negativeValues(argv, options),
      options,
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
      const unknown = firstUnknownFlag(argv, options);
      const near = unknown && closest(unknown, Object.keys(command.flags));
      throw new UsageError(
        `Unknown flag --${unknown} for "${name}".${near ? ` Did you mean --${near}?` : ""}\n${seeHelp}`,
      );
    }
    throw new UsageError(`${(err as Error).message}\n${seeHelp}`);
  }
  const [args, extra] = [
    parsed.positionals.slice(0, command.args.length),
    parsed.positionals.slice(command.args.length),
  ];
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}" for "${name}".\n${seeHelp}`);
  const missingArg = command.args[args.length];
  if (missingArg) throw new UsageError(`<${missingArg.name}> is required: ${missingArg.help}.\n${seeHelp}`);

  const flags: Record<string, string | number | boolean | undefined> = {};
  for (const [flag, spec] of Object.entries(command.flags)) {
    const raw = parsed.values[flag];
    if (raw === undefined || (raw === "" && spec.required && !spec.allowEmpty)) {
      if (spec.required) throw new UsageError(`--${flag} is required: ${spec.help}.\n${seeHelp}`);
      continue;
    }
    flags[flag] = typeof raw === "boolean" ? raw : convert(flag, spec, raw);
  }
  return { args, flags };
}

/**
 * Strict parseArgs takes "--amount -5" for a flag without its value; a negative number after a flag
 * that takes a value is that value (credit add --amount -5 removes credit).
 */
function negativeValues(argv: string[], options: Record<string, { type: string }>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i].startsWith("--") ? options[argv[i].slice(2)] : undefined;
    const next = argv[i + 1];
    if (flag?.type === "string" && next !== undefined && /^-\d/.test(next))
      out.push(`${argv[i]}=${argv[++i]}`);
    else out.push(argv[i]);
  }
  return out;
}

function convert(flag: string, spec: FlagSpec, raw: string): string | number | boolean {
  if (spec.type === "int") {
    if (!/^[+-]?\d+$/.test(raw.trim())) {
      throw new UsageError(`--${flag} takes a whole number; "${raw}" is not a number.`);
    }
    const n = Number(raw);
    if (!Number.isSafeInteger(n)) throw new UsageError(`--${flag}: ${raw} is too large.`);
    return n;
  }
  if (spec.type === "on-off") {
    if (["on", "true", "yes", "1"].includes(raw)) return true;
    if (["off", "false", "no", "0"].includes(raw)) return false;
    throw new UsageError(`--${flag} takes on or off, not "${raw}".`);
  }
  return raw;
}

/** parseArgs names the unknown option only inside its message; the tokens say it plainly. */
function firstUnknownFlag(argv: string[], options: Record<string, unknown>): string | undefined {
  const { tokens } = parseArgs({ args: argv, strict: false, allowPositionals: true, tokens: true });
  for (const t of tokens) if (t.kind === "option" && !(t.name in options)) return t.name;
  return undefined;
}

/** The nearest known name by edit distance, if it is near enough to be a likely typo. */
function closest(
  typed: string,
  known: string[],
  comparable: (candidate: string, typed: string) => string = (_c, t) => t,
): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const k of known) {
    const d = distance(comparable(k, typed), k);
    if (!best || d < best.d) best = { name: k, d };
  }
  return best && best.d <= Math.max(2, Math.floor(best.name.length / 3)) ? best.name : undefined;
}

function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length];
}

const placeholder = (spec: FlagSpec) =>
  spec.type === "boolean"
    ? ""
    : ` ${spec.value ?? (spec.type === "int" ? "N" : spec.type === "on-off" ? "on|off" : "TEXT")}`;

function usageLine(name: string, command: Command): string {
  const parts = [name, ...command.args.map((a) => `<${a.name}>`)];
  for (const [flag, spec] of Object.entries(command.flags)) {
    const f = `--${flag}${placeholder(spec)}`;
    parts.push(spec.required ? f : `[${f}]`);
  }
  return parts.join(" ");
}

function commandHelp(name: string, command: Command): string {
  const rows: [string, string][] = [
    ...command.args.map((a): [string, string] => [`<${a.name}>`, a.help]),
    ...Object.entries(command.flags).map(([flag, spec]): [string, string] => [
      `--${flag}${placeholder(spec)}`,
      `${spec.required ? "required. " : ""}${spec.help}`,
    ]),
    ["-h, --help", "this help"],
  ];
  const width = Math.max(...rows.map(([l]) => l.length));
  return [
    `Usage: ${TOOL} ${usageLine(name, command)}`,
    "",
    command.summary,
    "",
    ...rows.map(([l, h]) => `  ${l.padEnd(width)}  ${h}`),
  ].join("\n");
}

function commandList(commands: [string, Command][]): string {
  const width = Math.max(...commands.map(([n]) => n.length));
  return commands.map(([n, c]) => `  ${n.padEnd(width)}  ${c.summary}`).join("\n");
}

function toolHelp(groups: CommandGroup[]): string {
  return [
    `Usage: ${TOOL} <command> [<arguments>] [--flags]   (prints JSON)`,
    `       ${TOOL} <command> --help                     (that command's arguments and flags)`,
    "",
    ...groups.flatMap((g) => [g.title, commandList(Object.entries(g.commands)), ""]),
    "Exit status: 0 done, 1 refused by a service (its error as JSON on stderr), 2 usage error.",
  ].join("\n");
}

/**
 * A service's refusal in the command line's terms: a backend field (hourly_request_limit) becomes
 * the flag or argument the user typed (--hourly-limit).
 */
export function describeRefusal(r: ResolvedError, command: Command | undefined) {
  const names = new Map<string, string>();
  for (const [flag, spec] of Object.entries(command?.flags ?? {})) {
    const snake = flag.replaceAll("-", "_");
    for (const field of spec.field ? [spec.field] : [snake, `${snake}_id`]) names.set(field, `--${flag}`);
  }
  for (const a of command?.args ?? []) names.set(a.field, `<${a.name}>`);
  const rename = (message: string, field: string) => {
    const shown = names.get(field);
    return shown && message.startsWith(`${field} `) ? `${shown}${message.slice(field.length)}` : message;
  };
  const violations = r.info?.violations ?? [];
  const only = violations.length === 1 ? violations[0] : undefined;
  return {
    success: false,
    code: r.code,
    error: only ? rename(r.message, only.field) : r.message,
    details: violations.length
      ? violations.map((v) => ({ field: names.get(v.field) ?? v.field, message: rename(v.message, v.field) }))
      : undefined,
  };
}
