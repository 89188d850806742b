import { HbError } from "@hosting-platform/sdk";
import { CommanderError } from "commander";
import { buildProgram } from "./program.ts";
import { CliExit, createRuntime } from "./runtime.ts";

/**
 * Runs hb with these arguments (process.argv form) and answers the exit status: 0 done, 1 refused
 * by the API, 2 usage error, 3 a job or provisioning failed, 4 a wait timed out.
 */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const out = (s: string) => void process.stdout.write(s);
  const err = (s: string) => void process.stderr.write(s);
  const rt = createRuntime({ env, out, err, errIsTTY: process.stderr.isTTY === true });
  const program = buildProgram(rt);
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version end this way too, with code 0.
      return e.exitCode === 0 ? 0 : 2;
    }
    if (e instanceof CliExit) {
      err(`${e.message}\n`);
      return e.exitCode;
    }
    if (e instanceof HbError) {
      if (e.code === "TIMEOUT") {
        err(`${e.message}\n`);
        return 4;
      }
      // The API's envelope, as the API sent it: scripts branch on code.
      const envelope: Record<string, unknown> = { success: false, error: e.message, code: e.code };
      if (e.details.length) envelope.details = e.details;
      if (e.scope !== undefined) envelope.scope = e.scope;
      if (e.retryAfterSeconds !== undefined) envelope.retry_after_seconds = e.retryAfterSeconds;
      err(`${JSON.stringify(envelope)}\n`);
      return 1;
    }
    err(`hb: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}
