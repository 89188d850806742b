import { createHash } from "node:crypto";
import type { Redis } from "@hb/platform/redis";

/**
 * A second identical order within minutes asks first, as shops do. One-time form tokens stop a
 * form being acted on twice, but Back fetches the order form again (pages are not cached) with a
 * fresh token, so "Place the order" again would place a second order without a word. The portal
 * therefore remembers, per customer, the orders it placed in the last REPEAT_WINDOW_SECONDS by
 * what they asked for (product, cycle, hostname, image, quantity); an identical one in that time
 * is placed only when the form confirms it names the earlier order. Orders placed over the API are
 * not looked at: a program that sends the same order twice has its Idempotency-Key for that.
 */
const REPEAT_WINDOW_SECONDS = 600;

/** The earlier identical order, or "placing" while one is being placed from another tab. */
export type EarlierOrder = { id: string; number: string; placedAt: number } | "placing";

export interface RepeatClaim {
  /** Set when an identical order came first and the form did not confirm another. */
  earlier?: EarlierOrder;
  /** The order was placed: it is the one a next identical order is asked about. */
  placed(order: { id: string; number: string }): Promise<void>;
  /** The order was not placed (refused): the claim is given back. */
  release(): Promise<void>;
}

const PLACING = "placing";

export function repeatOrders(redis: Redis, ns: string) {
  const key = (customerId: string, what: Record<string, unknown>) =>
    `${ns}:portal-recent-order:${customerId}:${createHash("sha256").update(JSON.stringify(what)).digest("base64url")}`;

  /**
   * Claims the placement of an order asking for `what`. `confirmed` is the id the form confirmed
   * ordering another after (empty when it asked nothing): it lets this one through only when it
   * names the latest identical order, so a confirmation cannot be reused for a third one.
   */
  async function claim(
    customerId: string,
    what: Record<string, unknown>,
    confirmed: string,
  ): Promise<RepeatClaim> {
    const k = key(customerId, what);
    const placed = async (order: { id: string; number: string }) => {
      const earlier: EarlierOrder = { ...order, placedAt: Date.now() };
      await redis.set(k, JSON.stringify(earlier), "EX", REPEAT_WINDOW_SECONDS);
    };
    // SET NX is the check and the claim in one step: two tabs placing the same order together are
    // one placement and one question.
    if (await redis.set(k, PLACING, "EX", REPEAT_WINDOW_SECONDS, "NX")) {
      return { placed, release: async () => void (await redis.del(k)) };
    }
    const stored = await redis.get(k);
    if (stored === null) return claim(customerId, what, confirmed); // expired in between
    const earlier: EarlierOrder = stored === PLACING ? PLACING : (JSON.parse(stored) as EarlierOrder);
    const earlierId = earlier === PLACING ? PLACING : earlier.id;
    // A confirmed repeat leaves the earlier record as it is until it is placed itself, so a refusal
    // of it still asks the next time.
    if (confirmed && confirmed === earlierId) return { placed, release: async () => {} };
    return { earlier, placed, release: async () => {} };
  }
  return { claim };
}
export type RepeatOrders = ReturnType<typeof repeatOrders>;

/** "2 minutes ago", for the question. */
export function agoInMinutes(placedAt: number, now = Date.now()): string {
  const minutes = Math.floor((now - placedAt) / 60_000);
  if (minutes < 1) return "less than a minute ago";
  return minutes === 1 ? "1 minute ago" : `${minutes} minutes ago`;
}
