import { readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { renderDocs } from "../docs.ts";
import { buildOpenApi } from "../openapi.ts";
import { type RouteDef, route } from "../route.ts";

const guide = readFileSync(path.join(import.meta.dirname, "../guide.md"), "utf8");

/** GET / and the three documentation routes. The documents are built once, from the final route table. */
export function metaRoutes(all: () => RouteDef[], publicUrl: string): RouteDef[] {
  let openapi: Record<string, unknown> | undefined;
  let docsHtml: string | undefined;
  const doc = () => {
    openapi ??= buildOpenApi(all(), `${publicUrl}/api/v1`);
    return openapi;
  };
  return [
    route({
      method: "get",
      path: "/",
      tag: "Index",
      summary: "Key owner, label, scopes, current rate-limit counters and links",
      auth: { scope: "read", permissions: ["view_services", "view_invoices", "view_billing"] },
      response: z.object({
        owner: z.object({
          customer_id: z.string(),
          person_id: z.string(),
          name: z.string(),
          email: z.string(),
        }),
        label: z.string(),
        scopes: z.array(z.string()),
        key: z.object({ id: z.string(), label: z.string(), scopes: z.array(z.string()) }),
        rate_limit: z.object({ limit: z.number(), remaining: z.number(), reset: z.number() }),
        links: z.record(z.string(), z.string()),
      }),
      handler: async ({ principal, res }) => ({
        data: {
          owner: {
            customer_id: principal.customerId,
            person_id: principal.personId,
            name: principal.personName,
            email: principal.personEmail,
            is_owner: principal.isOwner,
          },
          label: principal.keyLabel,
          scopes: principal.scopes,
          key: { id: principal.keyId, label: principal.keyLabel, scopes: principal.scopes },
          permissions: principal.permissions,
          rate_limit: {
            limit: Number(res.getHeader("X-RateLimit-Limit")),
            remaining: Number(res.getHeader("X-RateLimit-Remaining")),
            reset: Number(res.getHeader("X-RateLimit-Reset")),
          },
          links: {
            docs: `${publicUrl}/api/v1/docs`,
            guide: `${publicUrl}/api/v1/guide.md`,
            openapi: `${publicUrl}/api/v1/openapi.json`,
          },
        },
        extra: { message: "Customer API v1 (beta)" },
      }),
    }),
    route({
      method: "get",
      path: "/openapi.json",
      tag: "Documentation",
      summary: "Machine-readable description of every route (no key needed)",
      auth: "none",
      handler: async ({ res }) => {
        res.json(doc());
        return undefined;
      },
    }),
    route({
      method: "get",
      path: "/docs",
      tag: "Documentation",
      summary: "Rendered reference (no key needed)",
      auth: "none",
      handler: async ({ res }) => {
        docsHtml ??= renderDocs(doc());
        res.type("html").send(docsHtml);
        return undefined;
      },
    }),
    route({
      method: "get",
      path: "/guide.md",
      tag: "Documentation",
      summary: "Markdown guide (no key needed)",
      auth: "none",
      handler: async ({ res }) => {
        res.type("text/markdown; charset=utf-8").send(guide);
        return undefined;
      },
    }),
  ];
}
