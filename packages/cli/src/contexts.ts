import { normaliseBaseUrl } from "@hosting-platform/sdk";
import type { Command } from "commander";
import { readConfig, writeConfig } from "./config.ts";
import { CliExit, type Runtime } from "./runtime.ts";
import { readSecret } from "./vps.ts";

/** Shows a key as its marker and prefix only: the secret never reaches a terminal. */
const maskKey = (key: string) => {
  const m = /^([a-z]+_[A-Za-z0-9]{8})_/.exec(key);
  return m ? `${m[1]}_…` : "…";
};

export function registerContexts(program: Command, rt: Runtime): void {
  const context = program
    .command("context")
    .description(`Named API endpoints and keys, kept in a 0600 file (${rt.configFile}; HB_CONFIG moves it)`);

  context
    .command("add")
    .description("add or replace a context and make it current")
    .argument("<name>", "a name, e.g. prod")
    .requiredOption("--api-url <url>", "the API's address, e.g. https://api.example.com")
    .option("--api-key-stdin", "read the API key from stdin (keeps it out of shell history)")
    .option("--api-key <key>", "the API key (visible in shell history; prefer --api-key-stdin)")
    .action(
      async (
        name: string,
        opts: { apiUrl: string; apiKeyStdin?: boolean; apiKey?: string },
        cmd: Command,
      ) => {
        const apiKey = (opts.apiKeyStdin ? await readSecret("-") : (opts.apiKey ?? "")).trim();
        if (!apiKey) throw new CliExit(2, "context add needs --api-key-stdin or --api-key <key>");
        let apiUrl: string;
        try {
          apiUrl = normaliseBaseUrl(opts.apiUrl);
        } catch {
          throw new CliExit(2, `--api-url takes an absolute URL; "${opts.apiUrl}" is not`);
        }
        const config = await readConfig(rt.configFile);
        config.contexts[name] = { apiUrl, apiKey };
        config.current = name;
        await writeConfig(rt.configFile, config);
        rt.print(cmd).record({ context: name, api_url: apiUrl, api_key: maskKey(apiKey), current: true });
      },
    );

  context
    .command("use")
    .description("make a context current")
    .argument("<name>", "the context")
    .action(async (name: string, _opts, cmd: Command) => {
      const config = await readConfig(rt.configFile);
      if (!config.contexts[name]) throw new CliExit(2, `No context named "${name}" (see hb context list).`);
      config.current = name;
      await writeConfig(rt.configFile, config);
      rt.print(cmd).record({ context: name, current: true });
    });

  context
    .command("list")
    .description("every context; keys are shown by their prefix only")
    .action(async (_opts, cmd: Command) => {
      const config = await readConfig(rt.configFile);
      const rows = Object.entries(config.contexts).map(([name, c]) => ({
        name,
        current: name === config.current,
        api_url: c.apiUrl,
        api_key: maskKey(c.apiKey),
      }));
      rt.print(cmd).list(rows, [
        { header: "CURRENT", value: (r) => (r.current ? "*" : "") },
        { header: "NAME", value: (r) => r.name },
        { header: "API URL", value: (r) => r.api_url },
        { header: "KEY", value: (r) => r.api_key },
      ]);
    });

  context
    .command("rm")
    .description("remove a context")
    .argument("<name>", "the context")
    .action(async (name: string, _opts, cmd: Command) => {
      const config = await readConfig(rt.configFile);
      if (!config.contexts[name]) throw new CliExit(2, `No context named "${name}" (see hb context list).`);
      delete config.contexts[name];
      if (config.current === name) config.current = undefined;
      await writeConfig(rt.configFile, config);
      rt.print(cmd).record({ context: name, removed: true });
    });
}
