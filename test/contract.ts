/**
 * The contract check of the system tests: every answer the tests receive is validated against the
 * operation's response schema in the gateway's own /openapi.json, so an answer that strays from the
 * published contract (a field renamed, a type changed, a status the operation does not document)
 * fails `npm test`.
 */
import { appendFileSync } from "node:fs";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

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
  ajv: Ajv2020;
  ops: Operation[];
}

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

let contract: Promise<Contract> | undefined;

/**
 * The document's operations, each response schema compiled when an answer first needs it: compiling
 * all of them took 1.4 s of CPU in every test file's process, which checks a handful.
 */
async function load(gateway: string): Promise<Contract> {
  const doc = (await (await fetch(`${gateway}/api/v1/openapi.json`)).json()) as {
    paths: Record<
      string,
      Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>
    >;
    components: { schemas: Record<string, unknown> };
  };
  // Without ajv's optimising passes over the code it generates: the same verdicts, and compiling
  // all 869 response schemas took 1.8-1.9 s of CPU against 2.6-2.7 s with them (a test file
  // compiles the few it meets, 65-476 ms of CPU before).
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true, code: { optimize: false } }));
  ajv.addSchema({ $id: "contract", components: doc.components });
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
  return { ajv, ops: ops.sort((a, b) => a.params - b.params) };
}

/** The operation's validator for `status`, compiled on first use; undefined when it documents none. */
function validatorOf(ajv: Ajv2020, op: Operation, status: string): ValidateFunction | undefined {
  const known = op.validators.get(status);
  if (known) return known;
  const schema = op.schemas.get(status);
  if (!schema) return undefined;
  // References point into the document's components, registered as "contract".
  const text = JSON.stringify(schema).replaceAll('"#/components/', '"contract#/components/');
  const validate = ajv.compile(JSON.parse(text));
  op.validators.set(status, validate);
  return validate;
}

/** Describes how an answer strays from the contract, or undefined when it keeps to it. */
export async function contractViolation(
  gateway: string,
  method: string,
  url: string,
  status: number,
  body: unknown,
): Promise<string | undefined> {
  const path = new URL(url, gateway).pathname;
  if (!path.startsWith("/api/v1")) return undefined;
  const rel = path.slice("/api/v1".length) || "/";
  contract ??= load(gateway);
  const { ajv, ops } = await contract;
  const op = ops.find((o) => o.method === method.toUpperCase() && o.pattern.test(rel));
  if (!op) return undefined; // not an operation: unknown routes answer 404 with the envelope
  if (!op.schemas.size) return undefined; // documentation routes answer HTML or Markdown
  const validate = validatorOf(ajv, op, String(status));
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
