import { readFileSync } from "node:fs";
import path from "node:path";
import { notFound } from "@hb/platform";
import { z } from "zod";
import { type ReferencePage, renderPlainDocs, renderReferencePage } from "../docs.ts";
import { loadRendererAsset, type RendererAsset } from "../docs-assets.ts";
import { resellerSignatureParameters, tagDescriptions } from "../docs-tags.ts";
import { buildOpenApi } from "../openapi.ts";
import { type RouteDef, route } from "../route.ts";

const guide = readFileSync(path.join(import.meta.dirname, "../guide.md"), "utf8");

const ASSETS_PATH = "/api/v1/docs/assets";

/** GET / and the documentation routes. The documents are built once, from the final route table. */
export function metaRoutes(all: () => RouteDef[], publicUrl: string): RouteDef[] {
  let openapi: Record<string, unknown> | undefined;
  // The document's text, made once: it is 2.9 MB, and every SDK generator and test run fetches it.
  let openapiText: string | undefined;
  let plainHtml: string | undefined;
  let renderer: RendererAsset | undefined;
  let reference: ReferencePage | undefined;
  const doc = () => {
    openapi ??= buildOpenApi(all(), `${publicUrl}/api/v1`, {
      tagDescriptions,
      resellerParameters: resellerSignatureParameters,
    });
    return openapi;
  };
  // Read on first use, so a gateway that never serves the reference never loads the bundle.
  const rendererAsset = () => {
    renderer ??= loadRendererAsset();
    return renderer;
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
          customer_id: z.uuid(),
          person_id: z.uuid(),
          name: z.string(),
          email: z.string(),
          is_owner: z.boolean(),
        }),
        label: z.string(),
        scopes: z.array(z.string()),
        key: z.object({ id: z.uuid(), label: z.string(), scopes: z.array(z.string()) }),
        permissions: z.array(z.string()),
        rate_limit: z.object({
          limit: z.int(),
          remaining: z.int(),
          reset: z.int().describe("Unix time (seconds) when the hourly window restarts"),
        }),
        links: z.object({ docs: z.url(), guide: z.url(), openapi: z.url() }),
      }),
      responseExtra: { message: z.string() },
      exampleExtra: { message: "Customer API v1 (beta)" },
      example: {
        owner: {
          customer_id: "01a207df-587a-7276-9fee-01c8d93f94bf",
          person_id: "01a207df-5880-7325-b2d4-823d93bf965c",
          name: "Ada Lovelace",
          email: "ada@example.com",
          is_owner: true,
        },
        label: "deploy script",
        scopes: ["read", "services"],
        key: {
          id: "01a207df-5885-770f-8fca-d90e77183658",
          label: "deploy script",
          scopes: ["read", "services"],
        },
        permissions: ["view_services", "manage_services"],
        rate_limit: { limit: 1000, remaining: 998, reset: 1795424400 },
        links: {
          docs: "https://api.example.com/api/v1/docs",
          guide: "https://api.example.com/api/v1/guide.md",
          openapi: "https://api.example.com/api/v1/openapi.json",
        },
      },
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
      rawContentType: "application/json",
      handler: async ({ res }) => {
        openapiText ??= JSON.stringify(doc());
        res.type("json").send(openapiText);
        return undefined;
      },
    }),
    route({
      method: "get",
      path: "/docs",
      tag: "Documentation",
      summary: "Interactive reference: navigation, search, schemas and code samples (no key needed)",
      auth: "none",
      rawContentType: "text/html",
      handler: async ({ res }) => {
        const asset = rendererAsset();
        reference ??= renderReferencePage(`${ASSETS_PATH}/${asset.name}`, asset.version);
        res.setHeader("Content-Security-Policy", reference.csp);
        res.setHeader("Cache-Control", "no-cache");
        res.type("html").send(reference.html);
        return undefined;
      },
    }),
    route({
      method: "get",
      path: "/docs/plain",
      tag: "Documentation",
      summary: "The reference as plain HTML, without JavaScript (no key needed)",
      auth: "none",
      rawContentType: "text/html",
      handler: async ({ res }) => {
        plainHtml ??= renderPlainDocs(doc());
        res.type("html").send(plainHtml);
        return undefined;
      },
    }),
    route({
      method: "get",
      path: "/docs/assets/:file",
      tag: "Documentation",
      summary: "Files of the interactive reference, named by content and cached for a year (no key needed)",
      auth: "none",
      rawContentType: "text/javascript",
      hidden: true,
      params: z.object({ file: z.string().max(200) }),
      handler: async ({ params, req, res }) => {
        const asset = rendererAsset();
        if (params.file !== asset.name) throw notFound("Documentation asset");
        res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
        res.setHeader("Vary", "Accept-Encoding");
        res.setHeader("X-Content-Type-Options", "nosniff");
        res.type(asset.contentType);
        if (req.acceptsEncodings("gzip") === "gzip") {
          res.setHeader("Content-Encoding", "gzip");
          res.send(await asset.gzipped());
        } else {
          res.send(asset.body);
        }
        return undefined;
      },
    }),
    route({
      method: "get",
      path: "/guide.md",
      tag: "Documentation",
      summary: "Markdown guide (no key needed)",
      auth: "none",
      rawContentType: "text/markdown",
      handler: async ({ res }) => {
        res.type("text/markdown; charset=utf-8").send(guide);
        return undefined;
      },
    }),
  ];
}
