import type { DescService } from "@bufbuild/protobuf";
import { rpcClient } from "@hb/platform";

export type Flags = Record<string, string | boolean | undefined>;
export type Command = (positional: string[], flags: Flags) => Promise<unknown>;
export interface CommandGroup {
  /** "customer create" → handler */
  commands: Record<string, Command>;
  /** One line per command for --help. */
  usage: string[];
}

export function client<S extends DescService>(desc: S, addrEnv: string, fallback: string) {
  return rpcClient("grpc-js", desc, process.env[addrEnv] ?? fallback, { timeoutMs: 10_000 }).client;
}

export function need(flags: Flags, name: string): string {
  const v = flags[name];
  if (typeof v !== "string" || v === "") throw new UsageError(`--${name} is required`);
  return v;
}
export const opt = (flags: Flags, name: string): string | undefined =>
  typeof flags[name] === "string" ? (flags[name] as string) : undefined;
export const list = (v: string | undefined): string[] =>
  v
    ? v
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : [];
export function onOff(v: string | undefined, name: string): boolean | undefined {
  if (v === undefined) return undefined;
  if (["on", "true", "1", "yes"].includes(v)) return true;
  if (["off", "false", "0", "no"].includes(v)) return false;
  throw new UsageError(`--${name} takes on or off`);
}
export function int(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new UsageError(`--${name} takes a whole number`);
  return n;
}

export class UsageError extends Error {}

/** Protobuf messages as plain JSON: no $typeName, bigint as number. */
export function plain(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (k, v) => (k === "$typeName" ? undefined : typeof v === "bigint" ? Number(v) : v)),
  );
}
