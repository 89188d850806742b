/**
 * In production a secret must be one nobody can guess: not a value copied from an example or left
 * at a development default, and long enough to be random. Which settings are secrets is read from
 * their names, so a service that adds a secret setting is covered without registering it here.
 */

/** Settings whose whole value is a secret (KEY_PEPPER, WEBHOOK_SECRET, ...). */
const SECRET_NAME = /(PEPPER|SECRET|PASSWORD|TOKEN)$/;
/** Settings that are URLs and may carry a password (DATABASE_URL, REDIS_URL, NATS_URL). */
const URL_NAME = /_URL$/;

const MIN_SECRET_LENGTH = 32;
const MIN_URL_PASSWORD_LENGTH = 16;

// Words people write where a real value belongs, anywhere in it. Five letters or more: a random
// base64 value of 32 bytes holds one by chance about 3 times in a million. "todo" counts only as a
// word of its own (not between letters or digits): as a bare substring it was in about 1 random
// value of 20,000, and such a value is refused at start-up (seen in CI).
const PLACEHOLDER_WORDS =
  /change[-_. ]?me|replace|example|placeholder|dummy|default|development|secret|password|fixme|insecure|sample|(?:^|[^a-z0-9])todo(?:[^a-z0-9]|$)/i;

/** Too few distinct characters to be random (aaaa..., 0000..., abab...). */
const lowVariety = (value: string) => new Set(value).size < 8;

/** Whether a value holds a word people write where a real value belongs. */
export const hasPlaceholderWord = (value: string) => PLACEHOLDER_WORDS.test(value);

function problemWith(value: string, minLength: number): string | undefined {
  if (hasPlaceholderWord(value) || lowVariety(value)) {
    return "looks like a placeholder, not a random value";
  }
  if (value.length < minLength) return `must be at least ${minLength} characters`;
  return undefined;
}

function urlPassword(value: string): string | undefined {
  try {
    const password = new URL(value).password;
    return password ? decodeURIComponent(password) : undefined;
  } catch {
    return undefined; // not a URL: the setting's own schema reports that
  }
}

/**
 * The problems with the secrets among `settings`, one line each, naming the setting and never its
 * value. Empty when every secret is fit for production.
 */
export function productionSecretProblems(settings: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(settings)) {
    if (typeof value !== "string") continue;
    if (SECRET_NAME.test(name)) {
      const problem = problemWith(value, MIN_SECRET_LENGTH);
      if (problem) problems.push(`${name}: ${problem}`);
    } else if (URL_NAME.test(name)) {
      const password = urlPassword(value);
      const problem = password === undefined ? undefined : problemWith(password, MIN_URL_PASSWORD_LENGTH);
      if (problem) problems.push(`${name}: its password ${problem}`);
    }
  }
  return problems;
}
