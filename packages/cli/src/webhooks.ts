import { normaliseBaseUrl } from "@hosting-platform/sdk";
import type { Command } from "commander";
import { CliExit, type Runtime } from "./runtime.ts";
import { webhooksListen } from "./webhooks-listen.ts";

export function registerWebhooks(program: Command, rt: Runtime): void {
  const webhooks = program.command("webhooks").description("Partner webhooks during development");

  webhooks
    .command("listen")
    .description("receive the partner's webhook deliveries and forward them to a local URL")
    .requiredOption("--forward-to <url>", "where to forward each delivery, e.g. http://localhost:3000/hooks")
    .option("--signing-secret <secret>", "the partner's signing secret (default: $HB_WEBHOOK_SECRET)")
    .action(async (opts: { forwardTo: string; signingSecret?: string }, cmd: Command) => {
      const signingSecret = opts.signingSecret ?? rt.env.HB_WEBHOOK_SECRET;
      if (!signingSecret) throw new CliExit(2, "webhooks listen needs --signing-secret or HB_WEBHOOK_SECRET");
      const ctx = await rt.context(cmd);
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once("SIGINT", onSignal);
      process.once("SIGTERM", onSignal);
      try {
        await webhooksListen({
          apiUrl: normaliseBaseUrl(ctx.apiUrl),
          apiKey: ctx.apiKey,
          signingSecret,
          forwardTo: opts.forwardTo,
          signal: stop.signal,
          log: (line) => rt.err(`${line}\n`),
        });
      } finally {
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
      }
    });
}
