import { createHbClient, type HbClient } from "@hosting-platform/sdk";
import type { Command } from "commander";
import { configPath, isExposed, type Resolved, readConfig, resolveContext } from "./config.ts";
import { type OutputFormat, type Printer, printer } from "./output.ts";

/** What commands need from the world: output streams, environment, the API client. */
export interface Runtime {
  env: NodeJS.ProcessEnv;
  out: (s: string) => void;
  err: (s: string) => void;
  /** Progress is redrawn in place on a terminal, printed line by line elsewhere. */
  errIsTTY: boolean;
  configFile: string;
  /** The endpoint and key this command runs with (--context, environment or current context). */
  context: (cmd: Command) => Promise<Resolved>;
  /** The SDK client for that context. */
  client: (cmd: Command) => Promise<HbClient>;
  print: (cmd: Command) => Printer;
}

/** A failure that ends the command with this exit status and message (usage 2, job failed 3, timeout 4). */
export class CliExit extends Error {
  readonly exitCode: number;
  constructor(exitCode: number, message: string) {
    super(message);
    this.exitCode = exitCode;
  }
}

export function createRuntime(io: {
  env: NodeJS.ProcessEnv;
  out: (s: string) => void;
  err: (s: string) => void;
  errIsTTY: boolean;
}): Runtime {
  const configFile = configPath(io.env);
  const rt: Runtime = {
    ...io,
    configFile,
    async context(cmd) {
      const named = cmd.optsWithGlobals().context as string | undefined;
      const config = await readConfig(configFile);
      const ctx = resolveContext(config, io.env, named);
      if (typeof ctx === "string") throw new CliExit(2, ctx);
      if (ctx.source !== "environment" && (await isExposed(configFile))) {
        io.err(`warning: ${configFile} is readable by others; it holds API keys (chmod 600 it)\n`);
      }
      return ctx;
    },
    async client(cmd) {
      const ctx = await rt.context(cmd);
      return createHbClient({
        baseUrl: ctx.apiUrl,
        apiKey: ctx.apiKey,
        userAgent: "hb-cli/0.1",
        onRetry: (e) =>
          io.err(
            `${e.method} ${e.path}: ${e.status ? `HTTP ${e.status}` : "no answer"}, ${e.kind === "replay" ? "it took effect; collecting its answer" : "retrying"} in ${Math.round(e.delayMs / 100) / 10} s\n`,
          ),
      });
    },
    print(cmd) {
      return printer(cmd.optsWithGlobals().output as OutputFormat, io.out, io.err);
    },
  };
  return rt;
}
