import {
  createRegistry,
  type DescEnum,
  type DescService,
  isMessage,
  type Message,
  toJson,
} from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { PortalService } from "@hb/contracts/hb/auth/v1/portal_pb";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { TopUpService } from "@hb/contracts/hb/billing/v1/payments_pb";
import { ComputeService } from "@hb/contracts/hb/compute/v1/compute_pb";
import { WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { backendClient, loadTlsIdentity } from "@hb/platform";
import { certFiles, DEV_CERTS_DIR } from "../cert-files.ts";

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

/** A client for the service definitions of one backend the admin surface calls. */
export function client<const D extends readonly DescService[]>(descs: D, addrEnv: string, fallback: string) {
  return backendClient("grpc-js", descs, process.env[addrEnv] ?? fallback, {
    timeoutMs: 10_000,
    tls: adminIdentity(),
  }).client;
}

/**
 * The staff surface's certificate: TLS_CA, TLS_CERT and TLS_KEY when set (a deployment's admin
 * certificate), else the development one `npm start` made.
 */
function adminIdentity() {
  const dev = certFiles(process.env.HB_CERTS_DIR ?? DEV_CERTS_DIR, "admin");
  return loadTlsIdentity({
    TLS_CA: process.env.TLS_CA ?? dev.TLS_CA,
    TLS_CERT: process.env.TLS_CERT ?? dev.TLS_CERT,
    TLS_KEY: process.env.TLS_KEY ?? dev.TLS_KEY,
  });
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

/** A date flag (YYYY-MM-DD, a real calendar date) as the contract takes a date: 00:00 UTC of that day. */
export function dayStart(flag: string, raw: string): Timestamp {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(raw);
  const d = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : undefined;
  if (!d || d.toISOString().slice(0, 10) !== raw) {
    throw new UsageError(`--${flag} takes a date written YYYY-MM-DD; "${raw}" is not one.`);
  }
  return timestampFromDate(d);
}

// The services' responses, to print them in the protobuf JSON form (enum names, RFC 3339 times).
const responses = createRegistry(
  AuthService.file,
  PortalService.file,
  BillingService.file,
  TopUpService.file,
  ComputeService.file,
  WebhooksService.file,
);

/** What a command returns as plain JSON: messages in their JSON form, other values as they are. */
export function plain(value: unknown): unknown {
  if (isMessage(value)) {
    const desc = responses.getMessage(value.$typeName);
    if (desc) return toJson(desc, value as Message, { alwaysEmitImplicit: true });
  }
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => k !== "$typeName")
        .map(([k, v]) => [k, plain(v)]),
    );
  }
  return typeof value === "bigint" ? Number(value) : value;
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
