import { createHash } from "node:crypto";

type Json = Record<string, unknown>;

const esc = (s: unknown) =>
  String(s ?? "").replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );

function schemaText(schema: unknown): string {
  return esc(JSON.stringify(schema, null, 2));
}

/**
 * The no-JavaScript reference at /api/v1/docs/plain: the OpenAPI document as one self-contained
 * HTML page, no scripts, readable in any browser.
 */
export function renderPlainDocs(doc: Json): string {
  const info = doc.info as { title: string; description: string; version: string };
  const paths = doc.paths as Record<string, Record<string, Json>>;
  const byTag = new Map<string, string[]>();
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const tag = (op.tags as string[])[0];
      const params = (op.parameters as Json[] | undefined) ?? [];
      const scope = op["x-required-scope"] as string | undefined;
      const body = (op.requestBody as { content: { "application/json": { schema: unknown } } } | undefined)
        ?.content["application/json"].schema;
      const html = `
<section class="op" id="${esc(op.operationId)}">
  <h3><span class="m ${esc(method)}">${esc(method.toUpperCase())}</span> <code>/api/v1${esc(path)}</code></h3>
  <p>${esc(op.summary)}</p>
  ${op.description ? `<p>${esc(op.description)}</p>` : ""}
  <p class="meta">${scope ? `Scope: <b>${esc(scope)}</b>` : "No API key needed"}</p>
  ${
    params.length
      ? `<table><tr><th>Parameter</th><th>In</th><th>Required</th><th>Schema</th></tr>${params
          .map(
            (p) =>
              `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${p.required ? "yes" : "no"}</td><td><code>${esc(JSON.stringify(p.schema))}</code></td></tr>`,
          )
          .join("")}</table>`
      : ""
  }
  ${body ? `<details><summary>Request body</summary><pre>${schemaText(body)}</pre></details>` : ""}
</section>`;
      byTag.set(tag, [...(byTag.get(tag) ?? []), html]);
    }
  }
  const toc = [...byTag.keys()].map((t) => `<li><a href="#tag-${esc(t)}">${esc(t)}</a></li>`).join("");
  const sections = [...byTag.entries()]
    .map(([t, ops]) => `<h2 id="tag-${esc(t)}">${esc(t)}</h2>${ops.join("")}`)
    .join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(info.title)} reference</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#1d2330}
code,pre{font:13px ui-monospace,monospace;background:#f3f4f7;border-radius:4px}
code{padding:1px 4px} pre{padding:.75rem;overflow:auto}
.op{border-top:1px solid #e2e4ea;padding:.5rem 0} .meta{color:#5a6273}
.m{display:inline-block;min-width:4.5em;text-align:center;border-radius:4px;color:#fff;font-size:12px;padding:2px 6px}
.get{background:#2f7d32}.post{background:#1f5fbf}.put{background:#8a5a00}.delete{background:#b3261e}.patch{background:#6b3fa0}
table{border-collapse:collapse;margin:.5rem 0} td,th{border:1px solid #e2e4ea;padding:4px 8px;text-align:left;vertical-align:top}
</style></head><body>
<h1>${esc(info.title)} <small>v${esc(info.version)}</small></h1>
<p>${esc(info.description)}</p>
<p>Machine-readable: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a> · Guide: <a href="/api/v1/guide.md">/api/v1/guide.md</a></p>
<p>Every answer is JSON: <code>{"success": true, "data": …}</code> or <code>{"success": false, "error": "…", "code": "…", "details": […]}</code>. Branch on <code>code</code>.</p>
<ul>${toc}</ul>
${sections}
</body></html>`;
}

/**
 * Scalar's options (see @scalar/types' api-reference configuration). Everything that would reach
 * a host other than the gateway is off: Scalar's web fonts, its telemetry, its AI agent and MCP
 * panels, the "open API client" button and the request proxy (never set: a test request, where
 * offered, goes straight to the server in the document, this gateway).
 */
const scalarConfiguration = {
  url: "/api/v1/openapi.json",
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  hideClientButton: true,
  showDeveloperTools: "never",
  documentDownloadType: "direct",
  defaultHttpClient: { targetKey: "shell", clientKey: "curl" },
  operationTitleSource: "path",
  defaultOpenAllTags: true,
  darkMode: false,
  metaData: { title: "Customer API reference" },
  // The system's own fonts instead of Scalar's Inter and JetBrains Mono from its CDN.
  customCss: `:root {
  --scalar-font: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  --scalar-font-code: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
}`,
};

export interface ReferencePage {
  html: string;
  /** Content-Security-Policy for the page: the browser itself refuses any other host. */
  csp: string;
}

/**
 * The interactive reference at /api/v1/docs: Scalar's bundle from the gateway, fed the OpenAPI
 * document, with a <noscript> way to the same content.
 */
export function renderReferencePage(scriptUrl: string, rendererVersion: string): ReferencePage {
  // JSON inside <script>: escape "<" so no string in the config can close the element.
  const init = `Scalar.createApiReference("#app", ${JSON.stringify(scalarConfiguration).replace(/</g, "\\u003c")});`;
  const initHash = createHash("sha256").update(init).digest("base64");
  const csp = [
    "default-src 'none'",
    `script-src 'self' 'sha256-${initHash}'`,
    // Scalar injects its stylesheet and per-component styles at run time.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="@scalar/api-reference ${esc(rendererVersion)}">
<title>Customer API reference</title>
<link rel="icon" href="data:,">
</head><body>
<noscript>
<h1>Customer API reference</h1>
<p>This interactive reference needs JavaScript. Without it, read
<a href="/api/v1/docs/plain">the plain HTML reference</a>,
<a href="/api/v1/guide.md">the guide (Markdown)</a> or
<a href="/api/v1/openapi.json">the OpenAPI document (JSON)</a>.</p>
</noscript>
<div id="app"></div>
<script src="${esc(scriptUrl)}"></script>
<script>${init}</script>
</body></html>`;
  return { html, csp };
}
