import { z } from "zod";

/**
 * Settings that exist for tests and development only: each lets a caller, or the environment,
 * do something no customer's deployment should allow. This is their one list. A service declares
 * such a setting by taking its schema from here, and with NODE_ENV=production `loadConfig`
 * refuses to start while any of them is on in the environment, whichever service reads it (a
 * switch in a shared ConfigMap is a mistake wherever it lands).
 */
interface TestSwitch {
  /** The service that reads it. */
  service: string;
  /** What it allows, in the refusal's words. */
  allows: string;
  /** Its schema in that service's configuration; a falsy result (false, undefined) is "off". */
  schema: z.ZodType;
}

const flag = z
  .enum(["true", "false"])
  .default("false")
  .transform((v) => v === "true");

export const testSwitches = {
  BILLING_CLOCK_CONTROL: {
    service: "billing",
    allows:
      "the admin identity to move billing's clock forward (AdminAdvanceClock), which renews, suspends and terminates every service it makes due",
    schema: flag,
  },
  SIM_FAILURES: {
    service: "compute",
    allows: "the simulator to fail every build whose hostname has the word fail in it",
    schema: z
      .enum(["0", "1", "true", "false", ""])
      .default("")
      .transform((v) => v === "1" || v === "true"),
  },
  STRIPE_API_BASE: {
    service: "billing",
    allows: "card payments to be sent to another host than Stripe's (the tests' stand-in)",
    schema: z.string().url().optional(),
  },
} satisfies Record<string, TestSwitch>;

export type TestSwitchName = keyof typeof testSwitches;

/** Whether a switch is on in `env`: set to anything but one of its spellings of "off". */
function isOn(name: TestSwitchName, env: NodeJS.ProcessEnv): boolean {
  const raw = env[name];
  if (raw === undefined) return false;
  const parsed = testSwitches[name].schema.safeParse(raw);
  // A value its own service would refuse is not "off" either: refused here without echoing it.
  return !parsed.success || Boolean(parsed.data);
}

/**
 * The test switches that are on in `env`, one line each naming the switch and what it allows,
 * never its value. Empty when none is.
 */
export function testSwitchProblems(env: NodeJS.ProcessEnv): string[] {
  return (Object.keys(testSwitches) as TestSwitchName[])
    .filter((name) => isOn(name, env))
    .map((name) => {
      const s = testSwitches[name];
      return `${name}: a test switch (it lets ${s.allows}; read by ${s.service}); unset it`;
    });
}
