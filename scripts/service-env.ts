/**
 * What each process the launcher starts may see of its environment. Secrets that belong to one
 * service are given to that service alone: a compromised gateway or billing process must not hold
 * the pepper every API key hash depends on.
 */
const SECRET_OWNERS: Readonly<Record<string, string>> = {
  KEY_PEPPER: "auth",
  STRIPE_SECRET_KEY: "billing",
  STRIPE_WEBHOOK_SECRET: "billing",
};

/** `base` without the secrets of other services. */
export function serviceEnv(name: string, base: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (v === undefined) continue;
    const owner = SECRET_OWNERS[k];
    if (owner === undefined || owner === name) env[k] = v;
  }
  return env;
}
