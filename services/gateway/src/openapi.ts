import { type ErrorCode, errorCodes } from "@hb/platform";
import { z } from "zod";
import type { RouteDef } from "./route.ts";

type Json = Record<string, unknown>;

const toSchema = (s: z.ZodType, io: "input" | "output" = "input"): Json =>
  strip(z.toJSONSchema(s, { target: "draft-2020-12", io, unrepresentable: "any" }) as Json);

function strip(schema: Json): Json {
  const { $schema: _drop, ...rest } = schema;
  return rest;
}

/** What each refusal means, for the description of an error response. */
const meaning: Record<ErrorCode, string> = {
  BAD_REQUEST: "invalid input, or the action does not apply to this resource; `details` names the fields",
  UNAUTHORIZED: "missing, malformed, unknown, expired or revoked key",
  SCOPE_REQUIRED: "the key lacks the route's scope (named in `scope`)",
  FORBIDDEN:
    "an account permission, the IP allowlist, the account type or the resource's state refused the call",
  ACCOUNT_SUSPENDED: "the account is suspended: writes are refused, reads allowed",
  ACTION_NOT_ALLOWED: "the provider behind the service does not expose this action to customers",
  FEATURE_DISABLED: "the Customer API or the route's module is switched off",
  NOT_FOUND: "no such resource, or not this customer's",
  METHOD_NOT_ALLOWED: "the path exists with another method",
  CONFLICT: "the resource is in the wrong state for this call",
  PAYLOAD_TOO_LARGE: "the body is larger than 1 MB",
  UNSUPPORTED_MEDIA_TYPE: "the body is not JSON",
  PROVIDER_ERROR: "the dedicated server's management controller did not complete the action",
  RATE_LIMITED: "the key's hourly request limit is spent; see Retry-After",
  ACTION_RATE_LIMITED: "this action's cool-down is spent; see Retry-After and `retry_after_seconds`",
  INTERNAL_ERROR: "platform-side failure (generic message)",
  BAD_GATEWAY: "a platform service answered unexpectedly (generic message)",
  SERVICE_UNAVAILABLE: "a platform dependency is unavailable (generic message); retry later",
};

/** The refusals a route can answer with, from its kind and what it declares. */
function refusalsOf(r: RouteDef): ErrorCode[] {
  const codes = new Set<ErrorCode>(["BAD_REQUEST"]);
  if (typeof r.auth === "object") {
    for (const c of [
      "UNAUTHORIZED",
      "FEATURE_DISABLED",
      "FORBIDDEN",
      "SCOPE_REQUIRED",
      "RATE_LIMITED",
    ] as const)
      codes.add(c);
    const write = r.auth.write ?? r.method !== "get";
    if (write) codes.add("ACCOUNT_SUSPENDED");
    if (r.cooldown) codes.add("ACTION_RATE_LIMITED");
  }
  // A resource named in the path can be missing or another customer's.
  if (/:[A-Za-z]/.test(r.path)) codes.add("NOT_FOUND");
  if (r.body) codes.add("PAYLOAD_TOO_LARGE");
  for (const c of r.errors ?? []) codes.add(c);
  for (const c of ["INTERNAL_ERROR", "BAD_GATEWAY", "SERVICE_UNAVAILABLE"] as const) codes.add(c);
  return [...codes];
}

const integerHeader = (description: string) => ({ description, schema: { type: "integer" } });
const rateLimitHeaders = {
  "X-RateLimit-Limit": integerHeader("Requests allowed per key in the hourly window"),
  "X-RateLimit-Remaining": integerHeader("Requests left in the current window"),
  "X-RateLimit-Reset": integerHeader("Unix time (seconds) when the window restarts"),
  RateLimit: {
    description: 'IETF draft form: "hourly";r=<remaining>;t=<seconds>',
    schema: { type: "string" },
  },
  "RateLimit-Policy": {
    description: 'IETF draft form: "hourly";q=<limit>;w=3600',
    schema: { type: "string" },
  },
};
const retryAfterHeader = { "Retry-After": integerHeader("Seconds to wait before retrying") };
const requestIdHeader = {
  "X-Request-Id": {
    description: "The caller's X-Request-Id when it was a token of up to 128 characters, else a new id",
    schema: { type: "string" },
  },
};
const challengeHeader = {
  "WWW-Authenticate": {
    description: 'Bearer realm="api", error="invalid_token"',
    schema: { type: "string" },
  },
};

function errorResponses(r: RouteDef, keyed: boolean): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of refusalsOf(r)) {
    const status = errorCodes[code].http;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, Json> = {};
  for (const [status, codes] of [...byStatus.entries()].sort(([a], [b]) => a - b)) {
    out[String(status)] = {
      description: codes.map((c) => `\`${c}\`: ${meaning[c]}`).join("; "),
      headers: {
        ...requestIdHeader,
        ...(keyed && status !== 401 ? rateLimitHeaders : {}),
        ...(status === 401 ? challengeHeader : {}),
        ...(status === 429 || status === 503 ? retryAfterHeader : {}),
      },
      content: {
        "application/json": {
          schema: {
            allOf: [
              { $ref: "#/components/schemas/Error" },
              { type: "object", properties: { code: { enum: codes } } },
            ],
          },
          examples: Object.fromEntries(
            codes.map((c) => [
              c,
              {
                value: {
                  success: false,
                  error: meaning[c][0].toUpperCase() + meaning[c].slice(1),
                  code: c,
                  ...(c === "BAD_REQUEST"
                    ? { details: [{ field: "id", message: "is not a valid identifier" }] }
                    : {}),
                  ...(c === "SCOPE_REQUIRED"
                    ? { scope: typeof r.auth === "object" ? r.auth.scope : "read" }
                    : {}),
                  ...(c === "ACTION_RATE_LIMITED" ? { retry_after_seconds: 42 } : {}),
                },
              },
            ]),
          ),
        },
      },
    };
  }
  return out;
}

export const operationIdOf = (r: RouteDef) =>
  `${r.method}${r.path.replace(/:([A-Za-z0-9_]+)/g, "$1").replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ""))}`;

export interface OpenApiOptions {
  /** Markdown description per tag. */
  tagDescriptions?: Record<string, string>;
  /** Header parameters every signed reseller operation carries. */
  resellerParameters?: Json[];
}

/**
 * The OpenAPI 3.1 document, generated from the same route table and zod schemas that validate
 * requests and describe answers, so the description cannot drift from what the gateway does (the
 * system tests check every answer they receive against it).
 */
export function buildOpenApi(routes: RouteDef[], serverUrl: string, opts: OpenApiOptions = {}): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const r of routes.filter((x) => !x.hidden)) {
    const path = r.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
    const parameters: Json[] = [];
    for (const [where, schema] of [
      ["path", r.params],
      ["query", r.query],
    ] as const) {
      if (!schema) continue;
      const json = toSchema(schema) as { properties?: Record<string, Json>; required?: string[] };
      for (const [name, prop] of Object.entries(json.properties ?? {})) {
        parameters.push({
          name,
          in: where,
          required: where === "path" || (json.required ?? []).includes(name),
          schema: prop,
        });
      }
    }
    // Path parameters the route declares without a schema (none should, but keep the doc valid).
    for (const m of r.path.matchAll(/:([A-Za-z0-9_]+)/g)) {
      if (!parameters.some((p) => p.name === m[1] && p.in === "path")) {
        parameters.push({ name: m[1], in: "path", required: true, schema: { type: "string" } });
      }
    }
    if (r.idempotent) {
      parameters.push({
        name: "Idempotency-Key",
        in: "header",
        required: false,
        description:
          "Up to 255 characters. A repeat with the same key and body within 24 hours returns the first answer and moves no money; the same key with another body is 400.",
        schema: { type: "string", maxLength: 255 },
      });
    }
    const keyed = typeof r.auth === "object";
    const signed = keyed && (r.auth as { signed?: boolean }).signed === true;
    if (signed) parameters.push(...(opts.resellerParameters ?? []));
    const okStatus = String(r.successStatus ?? 200);
    const operationId = operationIdOf(r);
    const extra = Object.fromEntries(
      Object.entries(r.responseExtra ?? {}).map(([k, v]) => [k, toSchema(v, "output")]),
    );
    const op: Json = {
      operationId,
      tags: [r.tag],
      summary: r.summary,
      ...(r.description || r.aliasOf
        ? {
            description: [
              r.description,
              r.aliasOf ? `Alias of \`${r.aliasOf}\`: the same action on another path.` : "",
            ]
              .filter(Boolean)
              .join("\n\n"),
          }
        : {}),
      ...(r.aliasOf ? { "x-alias-of": r.aliasOf } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(keyed
        ? {
            security: [signed ? { bearerAuth: [], resellerSignature: [] } : { bearerAuth: [] }],
            "x-required-scope": (r.auth as { scope: string }).scope,
          }
        : { security: [] }),
      responses: r.rawContentType
        ? {
            "200": {
              description:
                r.rawContentType === "text/event-stream"
                  ? "A stream of server-sent events (see the description)"
                  : "The document itself (no envelope)",
              content: {
                [r.rawContentType.split(";")[0]]: {
                  schema: r.rawContentType.startsWith("application/json")
                    ? { type: "object" }
                    : { type: "string" },
                },
              },
            },
            ...errorResponses(r, keyed),
          }
        : {
            [okStatus]: {
              description: "Success",
              headers: { ...requestIdHeader, ...(keyed ? rateLimitHeaders : {}) },
              content: {
                "application/json": {
                  schema: {
                    type: "object",
                    // Nothing undeclared beside data: an answer growing a top-level field fails the contract.
                    additionalProperties: false,
                    required: ["success", "data", ...Object.keys(extra)],
                    properties: {
                      success: { const: true },
                      data: r.response ? toSchema(r.response, "output") : {},
                      ...extra,
                    },
                  },
                  ...(r.example !== undefined
                    ? { example: { success: true, data: r.example, ...r.exampleExtra } }
                    : {}),
                },
              },
            },
            ...errorResponses(r, keyed),
          },
    };
    if (r.body) {
      op.requestBody = {
        // A body the route would accept as {} may be left out (e.g. paying the full amount).
        required: !r.body.safeParse({}).success,
        content: { "application/json": { schema: toSchema(r.body) } },
      };
    }
    paths[path] ??= {};
    paths[path][r.method] = op;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Customer API",
      version: "1.0.0-beta",
      description:
        "The customer REST API (beta: endpoints and response shapes may still change). Authenticate with `Authorization: Bearer <API key>`. Every answer is `{success: true, data}` or `{success: false, error, code, details?}`: branch on `code`.",
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    servers: [{ url: serverUrl }],
    tags: [...new Set(routes.filter((r) => !r.hidden).map((r) => r.tag))].map((name) => ({
      name,
      description: opts.tagDescriptions?.[name] ?? `${name} routes`,
    })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "API key: hbk_<prefix>_<secret>" },
        resellerSignature: {
          type: "apiKey",
          in: "header",
          name: "X-Reseller-Signature",
          description:
            'Reseller routes also need `X-Reseller-Timestamp` (Unix seconds, within 300 s) and `X-Reseller-Signature: hmac-sha256=<hex of HMAC-SHA256(signing secret, "<timestamp>.<raw body>")>`.',
        },
      },
      schemas: {
        Error: {
          type: "object",
          required: ["success", "error", "code"],
          properties: {
            success: { const: false },
            error: { type: "string", description: "Readable message; never branch on it" },
            code: { type: "string", description: "Machine code; branch on this" },
            details: {
              type: "array",
              items: {
                type: "object",
                required: ["field", "message"],
                properties: { field: { type: "string" }, message: { type: "string" } },
              },
            },
            scope: { type: "string", description: "The missing scope (SCOPE_REQUIRED)" },
            retry_after_seconds: { type: "integer", description: "Seconds to wait (ACTION_RATE_LIMITED)" },
          },
        },
      },
    },
  };
}
