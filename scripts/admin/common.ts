import type { DescEnum, DescService } from "@bufbuild/protobuf";
import { rpcClient } from "@hb/platform";

/**
 * How a flag is read. "int" and "on-off" arrive as text and are checked here, so a bad value is a
 * usage error naming the flag rather than something the service has to make sense of.
 */
export type FlagType = "string" | "boolean" | "int" | "on-off";

export interface FlagSpec {
  type: FlagType;
  help: string;
  required?: boolean;
  /** A required flag may be given as '' (e.g. --url '' clears the URL). */
  allowEmpty?: boolean;
  /** Placeholder in the usage line: ID, N, YYYY-MM-DD. */
  value?: string;
  /**
   * The backend's field this flag fills, so a validation error can name the flag. Without it the
   * flag's name in snake_case, or that plus "_id" (--customer → customer_id), is assumed.
   */
  field?: string;
}

/** A positional argument, e.g. <customerId>. Every one is required. */
export interface ArgSpec {
  name: string;
  help: string;
  /** The backend's field this argument fills (customer_id). */
  field: string;
}

type FlagValue<S extends FlagSpec> = S["type"] extends "boolean" | "on-off"
  ? boolean
  : S["type"] extends "int"
    ? number
    : string;
export type FlagValues<F extends Record<string, FlagSpec>> = {
  [K in keyof F]: F[K] extends { required: true } ? FlagValue<F[K]> : FlagValue<F[K]> | undefined;
};

/** One command: its arguments and flags declared once; the parser and the help are made from them. */
export interface Command {
  summary: string;
  args: ArgSpec[];
  flags: Record<string, FlagSpec>;
  // Method syntax: each command's run takes its own narrower flag values (see command()).
  run(args: string[], flags: Record<string, string | number | boolean | undefined>): Promise<unknown>;
}

/** Declares a command; `run` receives the flags typed from their declaration. */
export function command<const F extends Record<string, FlagSpec> = Record<never, FlagSpec>>(c: {
  summary: string;
  args?: ArgSpec[];
  flags?: F;
  run: (args: string[], flags: FlagValues<F>) => Promise<unknown>;
}): Command {
  return {
    summary: c.summary,
    args: c.args ?? [],
    flags: c.flags ?? {},
    run: (args, flags) => c.run(args, flags as FlagValues<F>),
  };
}

export interface CommandGroup {
  title: string;
  /** "customer create" → command */
  commands: Record<string, Command>;
}

export function client<S extends DescService>(desc: S, addrEnv: string, fallback: string) {
  return rpcClient("grpc-js", desc, process.env[addrEnv] ?? fallback, { timeoutMs: 10_000 }).client;
}

export const list = (v: string | undefined): string[] =>
  v
    ? v
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : [];

/** The user's command line is wrong: exit 2 with the message. */
export class UsageError extends Error {}

/** Protobuf messages as plain JSON: no $typeName, bigint as number. */
export function plain(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (k, v) => (k === "$typeName" ? undefined : typeof v === "bigint" ? Number(v) : v)),
  );
}

/**
 * The value of a contract enum a flag names in lower case ("vps" → MACHINE_KIND_VPS); a name the
 * enum does not have is a usage error.
 */
export function enumFlag(desc: DescEnum, flag: string, name: string): number {
  const value = desc.values.find((v) => v.number !== 0 && v.localName === name.toUpperCase());
  if (!value) {
    const names = desc.values.filter((v) => v.number !== 0).map((v) => v.localName.toLowerCase());
    throw new UsageError(`--${flag} must be one of ${names.join(", ")}`);
  }
  return value.number;
}
