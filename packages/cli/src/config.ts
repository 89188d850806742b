import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";

/** A named API endpoint and the key to use there. */
export interface Context {
  apiUrl: string;
  apiKey: string;
}

export interface Config {
  current?: string;
  contexts: Record<string, Context>;
}

/** Where contexts are kept: $HB_CONFIG, else $XDG_CONFIG_HOME/hb/config.json, else ~/.config/hb/config.json. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HB_CONFIG) return env.HB_CONFIG;
  const base = env.XDG_CONFIG_HOME || path.join(homedir(), ".config");
  return path.join(base, "hb", "config.json");
}

export async function readConfig(file: string): Promise<Config> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { contexts: {} };
    throw err;
  }
  const parsed = JSON.parse(text) as Partial<Config>;
  return { current: parsed.current, contexts: parsed.contexts ?? {} };
}

/**
 * Writes the file readable by its owner only (0600, in a 0700 directory): it holds API keys. The
 * new content goes to a temporary file first, so a crash never leaves half a config.
 */
export async function writeConfig(file: string, config: Config): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await rm(tmp, { force: true }); // a leftover would keep its own mode
  await writeFile(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600, flag: "wx" });
  await rename(tmp, file);
}

/** True when group or others may read the file: it should be 0600. */
export async function isExposed(file: string): Promise<boolean> {
  try {
    return ((await stat(file)).mode & 0o077) !== 0;
  } catch {
    return false;
  }
}

export type Resolved = Context & { source: string };

/**
 * The endpoint and key a command uses: the context named by --context; else HB_API_URL and
 * HB_API_KEY from the environment; else the current context. Answers a message when none fits.
 */
export function resolveContext(
  config: Config,
  env: NodeJS.ProcessEnv,
  named: string | undefined,
): Resolved | string {
  if (named) {
    const c = config.contexts[named];
    return c ? { ...c, source: `context ${named}` } : `No context named "${named}" (see hb context list).`;
  }
  if (env.HB_API_URL || env.HB_API_KEY) {
    if (!env.HB_API_URL || !env.HB_API_KEY) return "Set both HB_API_URL and HB_API_KEY, or neither.";
    return { apiUrl: env.HB_API_URL, apiKey: env.HB_API_KEY, source: "environment" };
  }
  if (config.current && config.contexts[config.current]) {
    return { ...config.contexts[config.current], source: `context ${config.current}` };
  }
  return "No API configured: run hb context add <name> --api-url <url> --api-key-stdin, or set HB_API_URL and HB_API_KEY.";
}
