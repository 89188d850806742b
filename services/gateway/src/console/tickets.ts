import { createHash, randomBytes } from "node:crypto";
import type { Redis } from "@hb/platform/redis";

/** What a console ticket lets its bearer open: one VPS's console, as this caller. */
export interface ConsoleGrant {
  customerId: string;
  personId: string;
  /** The API key the ticket was asked for with; "" for the portal. */
  keyId: string;
  permissions: string[];
  isOwner: boolean;
  currency: string;
  serviceId: string;
  /**
   * "portal": asked for by a signed-in person's page, so the WebSocket must also carry that
   * person's live session (and come from the gateway's own origin). "api": a key's, bearer only.
   */
  via: "portal" | "api";
}

const keyOf = (ns: string, ticket: string) =>
  // Stored by its hash: a Redis dump or MONITOR shows no usable ticket.
  `${ns}:console-ticket:${createHash("sha256").update(ticket).digest("base64url")}`;

/** A ticket's shape: 32 random bytes, base64url, with a prefix saying what it is. */
const TICKET = /^hbct_[A-Za-z0-9_-]{43}$/;

/**
 * Short-lived, single-use console tickets (POST /vps/{id}/console and the portal's Console page):
 * the WebSocket that opens the console carries one, since a browser cannot send an Authorization
 * header with a WebSocket and an API key must never sit in a URL.
 */
export function consoleTickets(redis: Redis, ns: string, ttlSeconds: number) {
  return {
    ttlSeconds,
    async issue(grant: ConsoleGrant): Promise<{ ticket: string; expiresAt: Date }> {
      const ticket = `hbct_${randomBytes(32).toString("base64url")}`;
      await redis.set(keyOf(ns, ticket), JSON.stringify(grant), "EX", ttlSeconds);
      return { ticket, expiresAt: new Date(Date.now() + ttlSeconds * 1000) };
    },
    /** The ticket's grant, once: a second use, an expired or an unknown ticket answers undefined. */
    async redeem(ticket: string): Promise<ConsoleGrant | undefined> {
      if (!TICKET.test(ticket)) return undefined;
      const stored = await redis.getdel(keyOf(ns, ticket));
      return stored ? (JSON.parse(stored) as ConsoleGrant) : undefined;
    },
  };
}

export type ConsoleTickets = ReturnType<typeof consoleTickets>;
