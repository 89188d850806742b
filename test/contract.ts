/**
 * The contract check of the system tests: every answer the tests receive is validated against the
 * operation's response schema in the gateway's own /openapi.json, so an answer that strays from the
 * published contract (a field renamed, a type changed, a status the operation does not document)
 * fails `npm test`.
 */
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Ajv2020, ValidateFunction } from "ajv/dist/2020.js";

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  params: number;
  /** Each documented status's JSON schema, its references pointing into "contract". */
  schemas: Map<string, unknown>;
  /** The validators compiled so far, by status. */
  validators: Map<string, ValidateFunction>;
}

interface Contract {
  /** Made on the first validator this process compiles (none when all come from the cache). */
  ajv?: Promise<Ajv2020>;
  components: unknown;
  /** Where this document's compiled validators are kept, shared by every test process. */
  cacheDir: string;
  ops: Operation[];
}

/**
 * Compiled validators are kept on disk as ajv's standalone modules, one per operation and status,
 * under the hash of the document they came from: compiling cost a test file's process 65-476 ms
 * of CPU (a sixth of it in some), and the seventy-odd system test files check mostly the same
 * operations. Importing a kept one costs under a millisecond, and a process whose validators are
 * all kept never loads ajv's compiler.
 */
export const CONTRACT_CACHE_ROOT = path.resolve(
  import.meta.dirname,
  "..",
  "node_modules",
  ".cache",
  "hb-contract-validators",
);

/**
 * The compiler's settings. Without ajv's optimising passes over the code it generates: the same
 * verdicts, and compiling all 869 response schemas took 1.8-1.9 s of CPU against 2.6-2.7 s with
 * them. `source` keeps the code, for the standalone module written to the cache.
 */
const AJV_OPTIONS = { strict: false, allErrors: true, code: { optimize: false, source: true, esm: true } };
/** Kept validators are those this ajv would compile with these settings. */
const KEPT_AS = createHash("sha256")
  .update(
    JSON.stringify([
      (createRequire(import.meta.url)("ajv/package.json") as { version: string }).version,
      AJV_OPTIONS,
    ]),
  )
  .digest("hex")
  .slice(0, 12);

let contract: Promise<Contract> | undefined;

/**
 * The document's operations, each response schema compiled when an answer first needs it: compiling
 * all of them took 1.4 s of CPU in every test file's process, which checks a handful.
 */
async function load(gateway: string): Promise<Contract> {
  const text = await (await fetch(`${gateway}/api/v1/openapi.json`)).text();
  const doc = JSON.parse(text) as {
    paths: Record<
      string,
      Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>
    >;
    components: { schemas: Record<string, unknown> };
    servers?: { url: string }[];
  };
  const ops: Operation[] = [];
  for (const [template, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const schemas = new Map<string, unknown>();
      for (const [status, resp] of Object.entries(op.responses)) {
        const schema = resp.content?.["application/json"]?.schema;
        if (schema) schemas.set(status, schema);
      }
      ops.push({
        method: method.toUpperCase(),
        template,
        pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
        params: (template.match(/\{/g) ?? []).length,
        schemas,
        validators: new Map(),
      });
    }
  }
  // A literal segment wins over a parameter (/services/{id}/options/available before /{optionId}).
  // Under the document's hash and the compiler's (KEPT_AS): a kept validator is the one this
  // process would compile.
  // The gateway's own address (each stack's port) is left out: every stack serves one contract.
  let stable = text;
  for (const server of doc.servers ?? []) stable = stable.replaceAll(new URL(server.url).origin, "");
  const docHash = createHash("sha256").update(stable).digest("hex").slice(0, 16);
  return {
    components: doc.components,
    cacheDir: path.join(CONTRACT_CACHE_ROOT, `${docHash}-${KEPT_AS}`),
    ops: ops.sort((a, b) => a.params - b.params),
  };
}

async function compiler(c: Contract): Promise<Ajv2020> {
  c.ajv ??= (async () => {
    const [{ Ajv2020 }, formats] = await Promise.all([import("ajv/dist/2020.js"), import("ajv-formats")]);
    // ajv-formats is CommonJS with a default export.
    const addFormats = formats.default as unknown as (ajv: Ajv2020) => Ajv2020;
    const ajv = addFormats(new Ajv2020(AJV_OPTIONS));
    ajv.addSchema({ $id: "contract", components: c.components });
    return ajv;
  })();
  return c.ajv;
}

const keptFile = (c: Contract, method: string, template: string, status: string) =>
  path.join(
    c.cacheDir,
    `${createHash("sha256").update(`${method} ${template} ${status}`).digest("hex").slice(0, 24)}.mjs`,
  );

/** Where the validator of `method template` for `status` is kept, once a process compiled it. */
export async function keptValidatorFile(gateway: string, method: string, template: string, status: number) {
  contract ??= load(gateway);
  return keptFile(await contract, method.toUpperCase(), template, String(status));
}

/**
 * The operation's validator for `status`: this process's, the cache's, or compiled now and kept
 * there; undefined when the operation documents no such status.
 */
async function validatorOf(
  c: Contract,
  op: Operation,
  status: string,
): Promise<ValidateFunction | undefined> {
  const known = op.validators.get(status);
  if (known) return known;
  const schema = op.schemas.get(status);
  if (!schema) return undefined;
  const file = keptFile(c, op.method, op.template, status);
  // A kept module can vanish under this process (a run started beside it prunes old ones): then
  // it is compiled here.
  let validate = existsSync(file)
    ? await import(pathToFileURL(file).href).then(
        (m: { default: ValidateFunction }) => m.default,
        () => undefined,
      )
    : undefined;
  if (!validate) {
    const ajv = await compiler(c);
    // References point into the document's components, registered as "contract".
    const text = JSON.stringify(schema).replaceAll('"#/components/', '"contract#/components/');
    validate = ajv.compile(JSON.parse(text));
    keep(file, ajv, validate);
  }
  op.validators.set(status, validate);
  return validate;
}

/**
 * Writes the validator's standalone module, whole or not at all (another process may be writing
 * the same one): its code `require`s ajv's runtime helpers and formats, which the module's own
 * `require` finds from the cache under node_modules/.
 */
function keep(file: string, ajv: Ajv2020, validate: ValidateFunction) {
  void import("ajv/dist/standalone/index.js")
    .then(({ default: standalone }) => {
      const code = (standalone as unknown as (ajv: Ajv2020, v: ValidateFunction) => string)(ajv, validate);
      mkdirSync(path.dirname(file), { recursive: true });
      const part = `${file}.${process.pid}.part`;
      writeFileSync(
        part,
        `import { createRequire } from "node:module";\nconst require = createRequire(import.meta.url);\n${code}`,
      );
      renameSync(part, file);
    })
    .catch(() => {
      // Not kept (a full disk, a process ending): the next process compiles it again.
    });
}

/** Describes how an answer strays from the contract, or undefined when it keeps to it. */
export async function contractViolation(
  gateway: string,
  method: string,
  url: string,
  status: number,
  body: unknown,
): Promise<string | undefined> {
  const pathname = new URL(url, gateway).pathname;
  if (!pathname.startsWith("/api/v1")) return undefined;
  const rel = pathname.slice("/api/v1".length) || "/";
  contract ??= load(gateway);
  const c = await contract;
  const op = c.ops.find((o) => o.method === method.toUpperCase() && o.pattern.test(rel));
  if (!op) return undefined; // not an operation: unknown routes answer 404 with the envelope
  if (!op.schemas.size) return undefined; // documentation routes answer HTML or Markdown
  const validate = await validatorOf(c, op, String(status));
  if (!validate) return `${method} ${op.template} answered ${status}, which the contract does not document`;
  if (validate(body)) return undefined;
  const errors = (validate.errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || "/"} ${e.message}`)
    .join("; ");
  return `${method} ${op.template} ${status}: the answer does not match its schema: ${errors}`;
}

/**
 * What a test does with a violation: fail (default), or with CONTRACT_REPORT=<file> only append it
 * to that file (to list what is left while the contract is being completed).
 */
export function onViolation(message: string) {
  const report = process.env.CONTRACT_REPORT;
  if (report) {
    appendFileSync(report, `${message}\n`);
    return;
  }
  throw new Error(`contract: ${message}`);
}
