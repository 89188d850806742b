import { z } from "zod";
import type { RouteDef } from "./route.ts";

type Json = Record<string, unknown>;

const toSchema = (s: z.ZodType): Json =>
  z.toJSONSchema(s, { target: "draft-2020-12", io: "input", unrepresentable: "any" }) as Json;

function strip(schema: Json): Json {
  const { $schema: _drop, ...rest } = schema;
  return rest;
}

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
});

/**
 * The OpenAPI 3.1 document, generated from the same route table and zod schemas that validate
 * requests, so the description cannot drift from what the gateway accepts.
 */
export function buildOpenApi(routes: RouteDef[], serverUrl: string): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const r of routes) {
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
    const keyed = typeof r.auth === "object";
    const okStatus = String(r.successStatus ?? 200);
    const op: Json = {
      operationId: `${r.method}${path.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ""))}`,
      tags: [r.tag],
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(keyed
        ? {
            security: [{ bearerAuth: [] }],
            "x-required-scope": (r.auth as { scope: string }).scope,
          }
        : { security: [] }),
      responses: {
        [okStatus]: {
          description: "Success",
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["success", "data"],
                properties: {
                  success: { const: true },
                  data: r.response ? strip(toSchema(r.response)) : {},
                },
              },
            },
          },
        },
        "400": errorResponse("Invalid input (BAD_REQUEST), with details per field"),
        ...(keyed
          ? {
              "401": errorResponse("Missing, malformed, unknown, expired or revoked key (UNAUTHORIZED)"),
              "403": errorResponse(
                "SCOPE_REQUIRED, FORBIDDEN, ACCOUNT_SUSPENDED, FEATURE_DISABLED or ACTION_NOT_ALLOWED",
              ),
              "429": errorResponse("RATE_LIMITED or ACTION_RATE_LIMITED; see Retry-After"),
            }
          : {}),
      },
    };
    if (r.body) {
      op.requestBody = {
        required: true,
        content: { "application/json": { schema: strip(toSchema(r.body)) } },
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
        "The customer REST API (beta: endpoints and response shapes may still change). Authenticate with `Authorization: Bearer <API key>`.",
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    servers: [{ url: serverUrl }],
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name, description: `${name} routes` })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "API key: hbk_<prefix>_<secret>" },
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
