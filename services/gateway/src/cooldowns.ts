import type { CooldownRule } from "@hb/platform/cooldown";

/** Where a cool-down's window is counted: on the resource named by the path's id, or once per person. */
type Per = "id" | "all";

interface CooldownRow {
  /** The spec's "Action" cell (docs/spec, "Per-action cool-downs"): cooldowns.test.ts compares. */
  spec: string;
  rule: CooldownRule;
  per: Per;
}

/**
 * The spec's per-action cool-down table, one row per action; routes take their row by name from
 * `cooldowns`. Rows that share an action name share one window (order creation, add-on purchase
 * and upgrade request are one row, so they are one window).
 */
export const COOLDOWN_TABLE = {
  power: {
    spec: "Power action on a service or VPS",
    rule: { action: "power", limit: 10, windowSeconds: 60 },
    per: "id",
  },
  dedicatedPower: {
    spec: "Power action on a dedicated server",
    rule: { action: "dedicated-power", limit: 5, windowSeconds: 60, keepOnFailure: true },
    per: "all",
  },
  reinstall: { spec: "Reinstall", rule: { action: "reinstall", limit: 1, windowSeconds: 300 }, per: "id" },
  password: { spec: "Password reset", rule: { action: "password", limit: 1, windowSeconds: 600 }, per: "id" },
  renew: { spec: "Renewal request", rule: { action: "renew", limit: 1, windowSeconds: 600 }, per: "id" },
  backup: {
    spec: "Backup create or restore",
    rule: { action: "backup", limit: 2, windowSeconds: 600 },
    per: "id",
  },
  cancel: { spec: "Cancellation", rule: { action: "cancel", limit: 5, windowSeconds: 60 }, per: "id" },
  order: {
    spec: "Order creation, add-on purchase, upgrade request",
    rule: { action: "order", limit: 30, windowSeconds: 900 },
    per: "all",
  },
  pay: {
    spec: "Paying an invoice or proforma from credit",
    rule: { action: "pay", limit: 10, windowSeconds: 60 },
    per: "id",
  },
} as const satisfies Record<string, CooldownRow>;

type Name = keyof typeof COOLDOWN_TABLE;
type OnId = { rule: CooldownRule; resource: (c: { params: { id: string } }) => string };
type OnAll = { rule: CooldownRule; resource: () => string };
type Cooldowns = { [N in Name]: (typeof COOLDOWN_TABLE)[N]["per"] extends "id" ? OnId : OnAll };

/** A route's `cooldown`, by the table's name: `cooldown: cooldowns.power`. */
export const cooldowns = Object.fromEntries(
  Object.entries(COOLDOWN_TABLE).map(([name, row]) => [
    name,
    {
      rule: row.rule,
      resource: row.per === "id" ? (c: { params: { id: string } }) => c.params.id : () => "all",
    },
  ]),
) as Cooldowns;

/**
 * Cool-downs of portal actions the API has no route for (so no row in the spec's table above),
 * reserved by the page itself with the same mechanism and key space as the API's. Creating a
 * top-up opens a Checkout Session at the card provider (or draws a transfer reference): without a
 * window every fresh form would open another. Counted per person, card and transfer together.
 */
export const PORTAL_COOLDOWNS = {
  topUp: { action: "top-up", limit: 5, windowSeconds: 600 },
} as const satisfies Record<string, CooldownRule>;
