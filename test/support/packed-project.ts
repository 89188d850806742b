/**
 * The SDK, the CLI and the webhook signature helper packed with `npm pack` and installed into an
 * empty project, as a user gets them. Packing compiles two packages and the install resolves their
 * dependencies: about a minute of CPU on two shared cores. The installed project is kept under
 * node_modules/.cache, named by a hash of everything that goes into it (the three packages' files,
 * the lock file, the Node and npm versions), and each run copies it; a change to any input packs
 * and installs again.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");
const PACKAGES = ["webhook-signature", "sdk", "cli"] as const;
const cacheRoot = path.join(root, "node_modules", ".cache", "hb-packed");

export interface PackedProject {
  /** A fresh copy of the installed project, the caller's own. */
  project: string;
  /** The files each tarball held, by package. */
  packedFiles: Record<string, string[]>;
  /** Whether this run packed and installed (no earlier run had the same inputs). */
  fresh: boolean;
}

/** Installs (or copies the kept install of) the packed packages into `<dir>/project`. */
export async function packedProject(dir: string): Promise<PackedProject> {
  const key = await inputsHash();
  const kept = path.join(cacheRoot, key);
  let fresh = false;
  if (!existsSync(path.join(kept, "packed.json"))) {
    await packAndInstall(kept);
    fresh = true;
  }
  const project = path.join(dir, "project");
  // verbatimSymlinks: node_modules/.bin links stay relative, pointing into the copy.
  await cp(path.join(kept, "project"), project, { recursive: true, verbatimSymlinks: true });
  const packedFiles = JSON.parse(await readFile(path.join(kept, "packed.json"), "utf8")) as Record<
    string,
    string[]
  >;
  return { project, packedFiles, fresh };
}

async function packAndInstall(target: string): Promise<void> {
  await mkdir(cacheRoot, { recursive: true });
  // Built beside its final name and renamed into place, so a run that stops half-way or a run
  // beside this one never sees a partial install.
  const work = await mkdtemp(`${target}.partial-`);
  try {
    const project = path.join(work, "project");
    await mkdir(project);
    const tarballs: string[] = [];
    const packedFiles: Record<string, string[]> = {};
    for (const pkg of PACKAGES) {
      // prepack compiles the package (tsc), so the tarball holds JS and .d.ts only.
      const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", work], {
        cwd: path.join(root, "packages", pkg),
      });
      const [packed] = JSON.parse(stdout.slice(stdout.indexOf("["))) as {
        filename: string;
        files: { path: string }[];
      }[];
      packedFiles[pkg] = packed.files.map((f) => f.path);
      tarballs.push(path.join(work, packed.filename));
    }
    await run("npm", ["init", "-y"], { cwd: project });
    await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...tarballs], {
      cwd: project,
    });
    await writeFile(path.join(work, "packed.json"), JSON.stringify(packedFiles));
    await rm(target, { recursive: true, force: true });
    await rename(work, target);
  } catch (err) {
    await rm(work, { recursive: true, force: true });
    throw err;
  }
  // Installs of earlier inputs are of no further use.
  for (const name of await readdir(cacheRoot)) {
    if (name !== path.basename(target) && !name.includes(".partial-"))
      await rm(path.join(cacheRoot, name), { recursive: true, force: true });
  }
}

/** A hash of every input of the packed install. */
async function inputsHash(): Promise<string> {
  const hash = createHash("sha256");
  const { stdout: npmVersion } = await run("npm", ["--version"]);
  hash.update(`node ${process.version} npm ${npmVersion.trim()}\n`);
  const files = [path.join(root, "package-lock.json")];
  for (const pkg of PACKAGES) files.push(...(await filesUnder(path.join(root, "packages", pkg))));
  for (const file of files.sort()) {
    hash.update(`${path.relative(root, file)}\n`);
    hash.update(await readFile(file));
  }
  return hash.digest("hex").slice(0, 32);
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules") continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(full)));
    else if (entry.isFile()) out.push(full);
  }
  return out;
}
