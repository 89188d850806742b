import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import type { Session } from "@hb/contracts/hb/auth/v1/portal_pb";
import type { Permission } from "@hb/platform";
import type { CooldownRule } from "@hb/platform/cooldown";
import { decideKey, KEY_REFUSALS, type KeyRefusal } from "@hb/platform/key-decision";
import type { z } from "zod";
import { needOf, type RouteDef } from "../../route.ts";
import { allRoutes } from "../../routes/index.ts";
import type { Operation } from "./api.ts";

/**
 * The portal's page-action table (docs/architecture.md, "The portal's page table"): every form the
 * portal answers is declared here with the API operation it performs, as route.ts declares the
 * API's routes. What the action needs (permission, "write" for a suspended account, the request
 * schema, the cool-down) is read from the API's own route for that operation, never restated: the
 * page sends the form's fields to the API, whose route validates and decides them, and the pages ask
 * the same table whether to draw a control (`may`), so a person is never shown a form the API
 * refuses them.
 */
export interface PageAction {
  /** The portal path the form posts to, as the portal's router matches it (under /portal). */
  path: string;
  method: "post";
  /**
   * The API operations the action performs: one, or one per kind of service (VPS, dedicated, any
   * other) when the API has a route for each. They must need the same (the table test checks).
   * Empty for an action the API has no operation for; `own` then says what it needs and why.
   */
  ops: readonly Operation[];
  /**
   * "once": a one-time token, the first submission acts and every repeat gets its outcome. Every
   * portal action is (the team and key forms, auth's own, too): no form is CSRF-only.
   */
  form: "once";
  /** Where the person lands after it (a description: a path template or "the job's page"). */
  redirect: string;
  /** Only for an action without an API operation: its need, and the reason it has no operation. */
  own?: { permissions: readonly Permission[]; write: boolean; ownerOnly?: boolean; why: string };
}

/** What an action needs, as the API's route table has it. */
export interface ActionNeed {
  permissions: readonly Permission[];
  write: boolean;
  ownerOnly: boolean;
  /** The API route's body schema (the page sends the form's fields for it to validate). */
  body?: z.ZodType;
  cooldown?: CooldownRule;
}

const table: PageAction[] = [];

/** Declares a page action (the module that serves it registers it with kit.ts `action`). */
export function pageAction(a: Omit<PageAction, "method" | "form"> & Partial<PageAction>): PageAction {
  const declared: PageAction = { method: "post", form: "once", ...a };
  if (declared.ops.length === 0 && !declared.own) {
    throw new Error(`page action ${declared.path} names no API operation and no need of its own`);
  }
  table.push(declared);
  return declared;
}

/** Every page action declared so far (filled as the page modules load). */
export const pageActions = (): readonly PageAction[] => table;

let apiTable: Map<string, RouteDef> | undefined;
/** The API's route for an operation (the table is built once; its schemas do not depend on the URL). */
export function apiRouteOf(op: Pick<Operation, "method" | "path">): RouteDef {
  apiTable ??= new Map(
    allRoutes("http://portal.invalid").map((r) => [`${r.method.toUpperCase()} ${r.path}`, r]),
  );
  const r = apiTable.get(`${op.method} ${op.path}`);
  if (!r || typeof r.auth !== "object") throw new Error(`no keyed API route ${op.method} ${op.path}`);
  return r;
}

/** The need of an action: its first operation's route (the others' are the same, by the table test). */
export function actionNeed(a: PageAction): ActionNeed {
  if (a.ops.length === 0) {
    const own = a.own as NonNullable<PageAction["own"]>;
    return { permissions: own.permissions, write: own.write, ownerOnly: own.ownerOnly ?? false };
  }
  const def = apiRouteOf(a.ops[0]);
  const need = needOf(def as RouteDef & { auth: Exclude<RouteDef["auth"], "none"> });
  return {
    permissions: need.permissions,
    write: need.write,
    ownerOnly: false,
    body: def.body,
    cooldown: def.cooldown?.rule,
  };
}

/**
 * Whether the signed-in person may use the action: the API's own decision (decideKey, which the
 * session's in-process call meets too) on the permission and suspension facts of the session, with
 * the key-only steps (switch, allowlist, scope, hourly window) out of the way. Rendering draws a
 * control only when this says yes; the API still decides each call (module switches included).
 */
export function may(s: Pick<Session, "permissions" | "customerStatus" | "isOwner">, a: PageAction): boolean {
  return refusalOf(s, a) === undefined;
}

/**
 * Why the person may not use the action (the API's refusal: permission or suspension), or
 * undefined when they may. `read`: only the action's permission, for the page that shows what the
 * action made (a suspended account still reads it, as the API's reads).
 */
export function refusalOf(
  s: Pick<Session, "permissions" | "customerStatus" | "isOwner">,
  a: PageAction,
  o: { read?: boolean } = {},
): KeyRefusal | undefined {
  const need = actionNeed(a);
  if (need.ownerOnly && !s.isOwner) return KEY_REFUSALS.permission;
  return decideKey(
    {
      customerApiEnabled: true,
      inventoryModule: true,
      vpsModule: true,
      revoked: false,
      expired: false,
      ipAllowlist: [],
      sourceIp: "",
      scopes: [],
      permissions: s.permissions,
      accountSuspended: suspended(s),
      window: { count: 0, limit: 1, reset: 0 },
      nowMs: 0,
    },
    { scope: "", permissionsAny: need.permissions, write: need.write && !o.read },
  );
}

/** The account is suspended: every page says so, and no write control is drawn. */
export const suspended = (s: Pick<Session, "customerStatus">) =>
  s.customerStatus === CustomerStatus.SUSPENDED;
