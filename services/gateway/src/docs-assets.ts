import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { gzip } from "node:zlib";

const gzipAsync = promisify(gzip);

/** One file of the reference renderer, named by its content so it can be cached for good. */
export interface RendererAsset {
  /** File name under /api/v1/docs/assets/, e.g. scalar-1.72.1-3f2a9c0d1e4b.js */
  name: string;
  /** The renderer package's version, shown in the page for whoever debugs it. */
  version: string;
  contentType: string;
  body: Buffer;
  /** The gzip-compressed body, made once on first use (about 4.3 MB shrinks to about 1.3 MB). */
  gzipped: () => Promise<Buffer>;
}

/**
 * The standalone browser bundle of @scalar/api-reference (JS with its CSS inside), read from the
 * installed package rather than a CDN, so the reference loads nothing from outside the gateway.
 */
export function loadRendererAsset(): RendererAsset {
  // The package's exports map hides package.json and dist/browser; both sit beside its entry point.
  const entry = fileURLToPath(import.meta.resolve("@scalar/api-reference"));
  const packageDir = path.resolve(path.dirname(entry), "..");
  const { version } = JSON.parse(readFileSync(path.join(packageDir, "package.json"), "utf8")) as {
    version: string;
  };
  const body = readFileSync(path.join(packageDir, "dist", "browser", "standalone.js"));
  const hash = createHash("sha256").update(body).digest("hex").slice(0, 12);
  let compressed: Promise<Buffer> | undefined;
  return {
    name: `scalar-${version}-${hash}.js`,
    version,
    contentType: "text/javascript; charset=utf-8",
    body,
    gzipped: () => {
      compressed ??= gzipAsync(body, { level: 9 });
      return compressed;
    },
  };
}
