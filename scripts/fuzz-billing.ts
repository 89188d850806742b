/**
 * `npm run fuzz:billing`: the billing invariant property of test/billing-invariants.test.ts, run
 * longer with a random seed on a private stack. Prints the seed (rerun with --seed) and, on a
 * failure, the shrunk command sequence with the calls it made and the invariants it broke.
 *
 *   npm run fuzz:billing -- [--seed N] [--runs N] [--minutes M] [--commands N] [--without kind,kind]
 *                           [--same-currency] [--ignore "invariant name;invariant name"] [--paths]
 * --without, --same-currency and --ignore narrow the run, to look past one known defect to the next.
 * --paths runs the property over time instead (test/billing-model/paths.ts: one step or many,
 * anchors, late credit).
 */
import { parseArgs } from "node:util";
import fc from "fast-check";
import type { Cmd } from "../test/billing-model/commands.ts";
import { KNOWN } from "../test/billing-model/known.ts";
import { PATH_EXAMPLES, pathProperty } from "../test/billing-model/paths.ts";
import { billingProperty } from "../test/billing-model/property.ts";
import { openWorld, STACK_ENV } from "../test/billing-model/world.ts";
import { ownStack } from "../test/own-stack.ts";
import { ensureDependencies } from "./deps.ts";

const { values } = parseArgs({
  options: {
    seed: { type: "string" },
    runs: { type: "string" },
    minutes: { type: "string", default: "10" },
    commands: { type: "string", default: "25" },
    without: { type: "string", default: "" },
    "same-currency": { type: "boolean", default: false },
    ignore: { type: "string", default: "" },
    paths: { type: "boolean", default: false },
  },
});
const seed = values.seed ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
const minutes = Number(values.minutes);
const numRuns = values.runs ? Number(values.runs) : 1_000_000;
const without = values.without.split(",").filter(Boolean) as Cmd["t"][];
const ignore = values.ignore.split(";").filter(Boolean);

const deps = await ensureDependencies({
  DATABASE_URL: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  NATS_URL: process.env.NATS_URL ?? "nats://127.0.0.1:4222",
});
Object.assign(process.env, deps.urls);
process.env.LOG_LEVEL ??= "warn";

process.stdout.write(
  `fuzz:billing seed=${seed} runs≤${values.runs ?? "∞"} minutes=${minutes} commands≤${values.commands}${without.length ? ` without ${without.join(",")}` : ""}${values["same-currency"] ? " same-currency" : ""}${ignore.length ? ` ignoring ${ignore.join("; ")}` : ""}\n`,
);
const s = await ownStack("fuzz", STACK_ENV);
const w = await openWorld(s.stack.env, s.stack.gatewayUrl);
let code = 0;
try {
  const started = Date.now();
  const limits = { seed, numRuns, interruptAfterTimeLimit: minutes * 60_000, markInterruptAsFailure: false };
  const details = values.paths
    ? await fc.check(pathProperty(w), { ...limits, examples: PATH_EXAMPLES.map((sc) => [sc]) })
    : await fc.check(
        billingProperty(w, {
          maxCommands: Number(values.commands),
          without,
          sameCurrency: values["same-currency"],
          ignore,
        }),
        // The sequences that found a defect before run first: a reverted fix fails at once.
        { ...limits, examples: KNOWN.map((cmds) => [cmds]) },
      );
  const secs = Math.round((Date.now() - started) / 1000);
  if (details.failed) {
    code = 1;
    process.stdout.write(
      `\nFAILED after ${details.numRuns} run(s), ${secs} s (seed ${seed}, path ${details.counterexamplePath})\n`,
    );
    process.stdout.write(`shrunk sequence: ${fc.stringify(details.counterexample?.[0])}\n\n`);
    process.stdout.write(
      `${details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)}\n`,
    );
  } else {
    process.stdout.write(
      `\nOK: ${details.numRuns} run(s) in ${secs} s, no invariant broken (seed ${seed})\n`,
    );
  }
} finally {
  await w.close();
  await s.close();
  await deps.stop();
}
process.exit(code);
