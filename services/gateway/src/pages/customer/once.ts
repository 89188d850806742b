import { randomBytes } from "node:crypto";
import type { Redis } from "@hb/platform/redis";
import { cartStore } from "./cart-store.ts";
import { repeatOrders } from "./repeat-order.ts";

/**
 * Forms that act at most once. Every action form carries a one-time token; the first submission
 * with a token claims it in Redis and runs the action, and any other submission with the same token
 * (a double click, a reload of the POST, the back button and submit again) waits for the first one's
 * outcome and gets the same redirect instead of acting again. Money-moving operations also send the
 * token as their Idempotency-Key, so billing itself answers a repeat with the first answer.
 *
 * The outcome (where to go and what to say there) stays under the token: the page it redirects to
 * shows its notice or error from there, so no message text travels in a URL. A token says when its
 * form was shown and is accepted for FORM_LIFETIME_SECONDS; its outcome is kept longer than that,
 * so a used token always answers its first result (a reload of the POST a day later is "expired",
 * never a second action).
 */
export interface Outcome {
  /** Where the browser goes next (a portal path). */
  location: string;
  notice?: string;
  error?: string;
  /** The token is past its lifetime and was never used: nothing was done. */
  expired?: boolean;
}

const TOKEN = /^[A-Za-z0-9_-]{24}$/;
/** How long a shown form may be sent (a tab left open over lunch still works). */
const FORM_LIFETIME_SECONDS = 6 * 3600;
/** Longer than any token can claim: a token's outcome is there as long as the token is accepted. */
const KEPT_SECONDS = FORM_LIFETIME_SECONDS + 3600;
const WAIT_MS = 20_000;

/** 18 bytes: the second the form was shown (4 bytes, big-endian) and 14 random bytes. */
export function newToken(now = Date.now()): string {
  const bytes = randomBytes(18);
  bytes.writeUInt32BE(Math.floor(now / 1000), 0);
  return bytes.toString("base64url");
}
export const validToken = (t: unknown): t is string => typeof t === "string" && TOKEN.test(t);

/** A token shown within its lifetime (and not in the future, give or take a clock's minute). */
function freshToken(token: string, now = Date.now()): boolean {
  const shown = Buffer.from(token, "base64url").readUInt32BE(0) * 1000;
  return shown <= now + 60_000 && now - shown <= FORM_LIFETIME_SECONDS * 1000;
}

export function onceStore(redis: Redis, ns: string) {
  const key = (subject: string, token: string) => `${ns}:portal-form:${subject}:${token}`;

  return {
    /** Orders placed in the last minutes, to ask before an identical one (repeat-order.ts). */
    recentOrders: repeatOrders(redis, ns),
    /** The people's carts (cart.ts). */
    carts: cartStore(redis, ns),

    /** Runs `act` for the first submission of `token`; later ones get the first one's outcome. */
    async run(subject: string, token: string, act: () => Promise<Outcome>): Promise<Outcome> {
      const k = key(subject, token);
      if (!freshToken(token)) {
        // Too old to act: a use of it is still answered with what it did.
        const stored = await redis.get(k);
        return stored ? (JSON.parse(stored) as Outcome) : { location: "", expired: true };
      }
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
