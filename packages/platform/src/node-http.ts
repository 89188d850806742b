/**
 * `node:http` for ES modules, without Node's bundled undici. An `import … from "node:http"` (named
 * imports too) builds the module's namespace by reading every export, and three of them
 * (`WebSocket`, `CloseEvent`, `MessageEvent`) are getters that load undici, fetch's
 * implementation, which no service uses: about 10 MB of resident memory in every process
 * (docs/benchmarks.md, issue 31 §5, second pass). `process.getBuiltinModule` hands over the
 * module object without reading them. Types still come from `import type … from "node:http"`.
 */
export const http = process.getBuiltinModule("node:http");
