import { randomBytes } from "node:crypto";
import type { Redis } from "@hb/platform/redis";

/**
 * Forms that act at most once. Every action form carries a one-time token; the first submission
 * with a token claims it in Redis and runs the action, and any other submission with the same token
 * (a double click, a reload of the POST, the back button and submit again) waits for the first one's
 * outcome and gets the same redirect instead of acting again. Money-moving operations also send the
 * token as their Idempotency-Key, so billing itself answers a repeat with the first answer.
 *
 * The outcome (where to go and what to say there) stays under the token for an hour: the page it
 * redirects to shows its notice or error from there, so no message text travels in a URL.
 */
export interface Outcome {
  /** Where the browser goes next (a portal path). */
  location: string;
  notice?: string;
  error?: string;
}

const TOKEN = /^[A-Za-z0-9_-]{24}$/;
const KEPT_SECONDS = 3600;
const WAIT_MS = 20_000;

export const newToken = () => randomBytes(18).toString("base64url");
export const validToken = (t: unknown): t is string => typeof t === "string" && TOKEN.test(t);

export function onceStore(redis: Redis, ns: string) {
  const key = (subject: string, token: string) => `${ns}:portal-form:${subject}:${token}`;

  return {
    /** Runs `act` for the first submission of `token`; later ones get the first one's outcome. */
    async run(subject: string, token: string, act: () => Promise<Outcome>): Promise<Outcome> {
      const k = key(subject, token);
      const deadline = Date.now() + WAIT_MS;
      for (;;) {
        if (await redis.set(k, "", "EX", KEPT_SECONDS, "NX")) {
          let outcome: Outcome;
          try {
            outcome = await act();
          } catch (err) {
            // Nothing was done (or the API refused it): the same form may be sent again.
            await redis.del(k);
            throw err;
          }
          await redis.set(k, JSON.stringify(outcome), "EX", KEPT_SECONDS);
          return outcome;
        }
        // Another submission of the same form is running or has run: wait for its outcome. If
        // it gave its claim back (refused), this one tries itself.
        const stored = await redis.get(k);
        if (stored) return JSON.parse(stored) as Outcome;
        if (Date.now() > deadline) {
          return { location: "", error: "This form is still being processed; reload the page in a moment." };
        }
        if (stored === "") await new Promise((r) => setTimeout(r, 100));
      }
    },

    /**
     * A secret an action made (a new API key) kept for the page its redirect shows, for two
     * minutes at most and read once: the outcome itself never holds it.
     */
    async keepSecret(subject: string, token: string, secret: string): Promise<void> {
      await redis.set(`${key(subject, token)}:secret`, secret, "EX", 120);
    },
    async takeSecret(subject: string, token: unknown): Promise<string | undefined> {
      if (!validToken(token)) return undefined;
      return (await redis.getdel(`${key(subject, token)}:secret`)) ?? undefined;
    },

    /** The notice or error an action left for the page it redirected to (`?done=<token>`). */
    async outcome(subject: string, token: unknown): Promise<Outcome | undefined> {
      if (!validToken(token)) return undefined;
      const stored = await redis.get(key(subject, token));
      return stored ? (JSON.parse(stored) as Outcome) : undefined;
    },
  };
}
export type OnceStore = ReturnType<typeof onceStore>;
