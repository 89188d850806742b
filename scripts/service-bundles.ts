/**
 * Each service as one ES module (esbuild), for the stacks `npm test` starts by the dozen, and the
 * admin command the tests run (scripts/bundle-file.ts, adminEntry). A
 * service's source is about a thousand modules (its own, the contracts' and its packages'), and
 * Node's loader spent about 0.5 CPU-s a process resolving, reading and linking them even with the
 * compile cache; the bundle of the same source starts a stack in about 45% less CPU
 * (docs/benchmarks.md, "Issue 31 §5, 2026-11-30 (afternoon)"). `npm start`, the benchmarks and the image
 * run the source, as do the tests that start a service by its main.ts.
 *
 * The bundle sits inside the checkout so that what the services resolve at run time
 * (`import.meta.resolve`, `createRequire`) still finds node_modules/. `import.meta.dirname` and
 * `import.meta.url` are written into each of the project's modules as that module's own, so
 * migrations, pages and assets are read where they are.
 */
import { readdir, readFile, rm, stat } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import * as esbuild from "esbuild";
import { bundleFile } from "./bundle-file.ts";
import { STACK_PROCESSES } from "./stack.ts";

const root = path.resolve(import.meta.dirname, "..");

/** Where `npm test` keeps each run's bundles, a folder per run. */
export const BUNDLES_ROOT = path.join(root, "node_modules", ".cache", "hb-service-bundles");

/** A module's `import.meta.dirname` and `import.meta.url`, made its source's own. */
export function withOwnImportMeta(text: string, file: string): string {
  return text
    .replaceAll("import.meta.dirname", JSON.stringify(path.dirname(file)))
    .replaceAll("import.meta.filename", JSON.stringify(file))
    .replaceAll("import.meta.url", JSON.stringify(pathToFileURL(file).href));
}

const ownImportMeta: esbuild.Plugin = {
  name: "own-import-meta",
  setup(build) {
    build.onLoad({ filter: /\.(ts|js|mjs)$/ }, async (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const text = await readFile(args.path, "utf8");
      if (!text.includes("import.meta")) return undefined;
      return {
        contents: withOwnImportMeta(text, args.path),
        loader: args.path.endsWith(".ts") ? "ts" : "js",
      };
    });
  },
};

/**
 * Bundles `entries` (module paths, by default every service's main.ts and the admin command, which
 * the tests run a few dozen times) into `dir`, one file each
 * named after `names`. CommonJS packages inside an ES module bundle call `require` for Node's
 * own modules: the banner gives them one.
 */
export async function buildBundles(
  dir: string,
  entries: Record<string, string> = Object.fromEntries([
    ...STACK_PROCESSES.map((name) => [name, path.join(root, "services", name, "src", "main.ts")]),
    ["admin", path.join(root, "scripts", "admin.ts")],
  ]),
): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await Promise.all(
    Object.entries(entries).map(([name, entry]) =>
      esbuild.build({
        entryPoints: [entry],
        outfile: bundleFile(dir, name),
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node24",
        // The project's packages export their TypeScript source under this condition (tsconfig.json).
        conditions: ["hb-source"],
        banner: {
          js: 'import { createRequire as __hbCreateRequire } from "node:module"; const require = __hbCreateRequire(import.meta.url);',
        },
        plugins: [ownImportMeta],
        logLevel: "error",
      }),
    ),
  );
}

/**
 * Removes the folders in `parent` older than `maxAgeMs`: a run's bundles, which it removes itself
 * when it ends unless killed outright (about 23 MB each), and the contract check's validators of
 * documents no longer served (test/contract.ts).
 */
export async function removeOldFolders(parent: string, maxAgeMs = 24 * 3600_000): Promise<void> {
  const names = await readdir(parent).catch(() => [] as string[]);
  for (const name of names) {
    const dir = path.join(parent, name);
    const { mtimeMs } = await stat(dir).catch(() => ({ mtimeMs: Date.now() }));
    if (Date.now() - mtimeMs > maxAgeMs) await rm(dir, { recursive: true, force: true });
  }
}
