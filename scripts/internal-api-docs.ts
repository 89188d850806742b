/**
 * `npm run docs:internal`: writes docs/internal-api.md, the reference of the internal gRPC API
 * for services that call compute, billing, auth or webhooks directly. Generated from the contracts
 * themselves (`buf build` with source info: services, RPCs, messages, enums and their comments),
 * so it cannot drift from proto/; CI regenerates it and fails on a difference
 * (scripts/ci/generated-match.sh).
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");

interface Location {
  path?: number[];
  leadingComments?: string;
  trailingComments?: string;
}
interface Field {
  name: string;
  number: number;
  label?: string;
  type: string;
  typeName?: string;
  proto3Optional?: boolean;
  options?: { "[buf.validate.field]"?: FieldRules };
}
/** The part of buf.validate.FieldRules the contracts use, as `buf build` writes it in JSON. */
interface FieldRules {
  required?: boolean;
  ignore?: string;
  cel?: { id: string; message: string; expression: string }[];
  string?: Record<string, unknown>;
  enum?: { definedOnly?: boolean; notIn?: number[] };
  repeated?: { items?: FieldRules; minItems?: string; maxItems?: string };
  [kind: string]: unknown;
}
interface Message {
  name: string;
  field?: Field[];
  nestedType?: Message[];
  enumType?: EnumType[];
  options?: { mapEntry?: boolean };
}
interface EnumType {
  name: string;
  value: { name: string; number: number }[];
}
interface Method {
  name: string;
  inputType: string;
  outputType: string;
}
interface FileDesc {
  name: string;
  package: string;
  messageType?: Message[];
  enumType?: EnumType[];
  service?: { name: string; method?: Method[] }[];
  sourceCodeInfo?: { location: Location[] };
}

/** Where each backend listens (environment variable of its callers, and the default port). */
const addresses: Record<string, string> = {
  "hb.auth.v1.AuthService": "`AUTH_ADDR` (default `127.0.0.1:50051`)",
  "hb.compute.v1.ComputeService": "`COMPUTE_ADDR` (default `127.0.0.1:50052`)",
  "hb.billing.v1.BillingService": "`BILLING_ADDR` (default `127.0.0.1:50053`)",
  "hb.webhooks.v1.WebhooksService": "`WEBHOOKS_ADDR` (default `127.0.0.1:50054`)",
};

const image = JSON.parse(
  execFileSync(path.join(root, "node_modules/.bin/buf"), ["build", "-o", "-#format=json"], {
    cwd: path.join(root, "proto"),
    maxBuffer: 64 * 1024 * 1024,
  }).toString(),
) as { file: FileDesc[] };

const files = image.file
  .filter((f) => !["google/", "grpc/", "buf/"].some((vendored) => f.name.startsWith(vendored)))
  .sort((a, b) => a.name.localeCompare(b.name));

const comment = (f: FileDesc, p: number[]) => {
  const loc = f.sourceCodeInfo?.location.find((l) => l.path && l.path.join(".") === p.join("."));
  const text = (loc?.leadingComments ?? loc?.trailingComments ?? "").trim();
  return text.replace(/\s*\n\s*/g, " ").replaceAll("|", "\\|");
};

const scalar: Record<string, string> = {
  TYPE_DOUBLE: "double",
  TYPE_FLOAT: "float",
  TYPE_INT64: "int64",
  TYPE_UINT64: "uint64",
  TYPE_INT32: "int32",
  TYPE_BOOL: "bool",
  TYPE_STRING: "string",
  TYPE_BYTES: "bytes",
  TYPE_UINT32: "uint32",
  TYPE_SINT32: "sint32",
  TYPE_SINT64: "sint64",
};

function typeOf(field: Field, msg: Message): string {
  const name = field.typeName?.replace(/^\./, "");
  if (field.type === "TYPE_MESSAGE") {
    const entry = msg.nestedType?.find((n) => n.options?.mapEntry && name?.endsWith(`.${n.name}`));
    if (entry?.field) {
      const [k, v] = entry.field;
      return `map<${typeOf(k, entry)}, ${typeOf(v, entry)}>`;
    }
  }
  const base = scalar[field.type] ?? name ?? field.type;
  if (field.label === "LABEL_REPEATED") return `repeated ${base}`;
  if (field.proto3Optional) return `optional ${base}`;
  return base;
}

/** A field's declared rules (buf.validate) in words, checked by the server before the handler. */
function rulesOf(rules: FieldRules | undefined): string[] {
  if (!rules) return [];
  const words: string[] = [];
  if (rules.required) words.push("required");
  const text = rules.string ?? {};
  if (text.uuid) words.push(rules.ignore === "IGNORE_IF_ZERO_VALUE" ? "a UUID or empty" : "a UUID");
  if (text.maxLen) words.push(`at most ${text.maxLen} characters`);
  if (rules.enum?.definedOnly) words.push("a defined value");
  // Only the zero value (UNSPECIFIED) is ever excluded.
  if (rules.enum?.notIn?.length) words.push("not unspecified");
  const range = numberRange(rules);
  if (range) words.push(range);
  if (rules.repeated?.items) words.push(...rulesOf(rules.repeated.items).map((w) => `each ${w}`));
  // Custom rules (CEL) are described by their messages: "must be …", or "is required" (not blank).
  for (const rule of rules.cel ?? [])
    words.push(rule.message.replace(/^must be /, "").replace(/^is required$/, "not blank"));
  return words;
}

/** A declared integer range in words ("from 0 to 200", "0 or more"); undefined when none. */
function numberRange(rules: FieldRules): string | undefined {
  const bounds = (rules.int32 ?? rules.int64) as
    | { gte?: number | string; gt?: number | string; lte?: number | string; lt?: number | string }
    | undefined;
  if (!bounds) return undefined;
  const { gte, gt, lte, lt } = bounds;
  if (gte !== undefined && lte !== undefined) return `from ${gte} to ${lte}`;
  const low = gte !== undefined ? `${gte} or more` : gt !== undefined ? `more than ${gt}` : undefined;
  const high = lte !== undefined ? `at most ${lte}` : lt !== undefined ? `less than ${lt}` : undefined;
  return [low, high].filter(Boolean).join(" and ") || undefined;
}

const ruleText = (field: Field) => {
  const words = rulesOf(field.options?.["[buf.validate.field]"]);
  return words.length ? ` **Rule:** ${words.join("; ")}.` : "";
};

const out: string[] = [
  "# Internal API (gRPC)",
  "",
  "Generated by `npm run docs:internal` from `proto/`; do not edit. Every backend speaks plain gRPC over",
  "HTTP/2 (any gRPC client works; `grpc.health.v1.Health` answers on each) and errors carry the spec's",
  "machine code in a `hb.platform.v1.ErrorInfo` detail (binary trailer `hb-error-bin` with grpc-js). Calls",
  "made for a customer carry `hb.platform.v1.Caller`. `examples/internal-client.ts` shows a typed client.",
  "A request field's **Rule** is declared in the contract (protovalidate) and checked by the serving",
  "side before the handler: a request that breaks one is refused with `BAD_REQUEST`, each field named.",
  "",
];

for (const f of files) {
  for (const [si, svc] of (f.service ?? []).entries()) {
    const full = `${f.package}.${svc.name}`;
    out.push(
      `## ${full}`,
      "",
      `\`${f.name}\`. Address: ${addresses[full] ?? "see the service's config"}.`,
      "",
    );
    const about = comment(f, [6, si]);
    if (about) out.push(about, "");
    out.push("| RPC | Request → response | What it does |", "|---|---|---|");
    for (const [mi, m] of (svc.method ?? []).entries()) {
      const req = m.inputType.replace(/^\./, "");
      const res = m.outputType.replace(/^\./, "");
      out.push(`| \`${m.name}\` | \`${req}\` → \`${res}\` | ${comment(f, [6, si, 2, mi]) || ""} |`);
    }
    out.push("");
  }
}

out.push("## Messages", "");
for (const f of files) {
  for (const [mi, msg] of (f.messageType ?? []).entries()) {
    out.push(`### ${f.package}.${msg.name}`, "");
    const about = comment(f, [4, mi]);
    if (about) out.push(about, "");
    if (!msg.field?.length) {
      out.push("No fields.", "");
      continue;
    }
    out.push("| # | Field | Type | Meaning |", "|---|---|---|---|");
    for (const [fi, field] of msg.field.entries()) {
      out.push(
        `| ${field.number} | \`${field.name}\` | \`${typeOf(field, msg)}\` | ${comment(f, [4, mi, 2, fi])}${ruleText(field)} |`,
      );
    }
    out.push("");
  }
  for (const [ei, en] of (f.enumType ?? []).entries()) {
    out.push(`### ${f.package}.${en.name} (enum)`, "");
    const about = comment(f, [5, ei]);
    if (about) out.push(about, "");
    out.push(en.value.map((v) => `\`${v.name}\` = ${v.number}`).join(", "), "");
  }
}

// An argument names another file to write (scripts/ci/generated-match.sh compares it with this one).
const target = process.argv[2] ? path.resolve(process.argv[2]) : path.join(root, "docs/internal-api.md");
writeFileSync(target, `${out.join("\n").trimEnd()}\n`);
