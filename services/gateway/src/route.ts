import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Principal } from "@hb/contracts/hb/auth/v1/auth_pb";
import type { CallerSchema } from "@hb/contracts/hb/platform/v1/caller_pb";
import type { ErrorCode, Permission, Scope } from "@hb/platform";
import type { CooldownRule } from "@hb/platform/cooldown";
import type { Request, Response } from "express";
import type { z } from "zod";
import type { Clients } from "./clients.ts";

export type HttpMethod = "get" | "post" | "put" | "patch" | "delete";

/** Where the API's routes are mounted; a route's path is relative to it. */
export const API_PREFIX = "/api/v1";

/** What a keyed route requires, checked by auth in the spec's order. */
export interface KeyedAuth {
  scope: Scope;
  /** The person must hold one of these (shared accounts). */
  permissions?: Permission[];
  /** Writes are refused for a suspended account. Defaults to true for non-GET routes. */
  write?: boolean;
  /** The route's module must be on, else 403 FEATURE_DISABLED. */
  module?: "inventory" | "vps";
  /** Reseller routes: the request must carry X-Reseller-Timestamp and X-Reseller-Signature. */
  signed?: boolean;
}

/** What the key check asks of a keyed route's request (a GET reads; anything else writes unless said). */
export interface RouteNeed {
  scope: Scope;
  permissions: readonly Permission[];
  write: boolean;
  module?: "inventory" | "vps";
  signed: boolean;
}

export function needOf(def: { method: HttpMethod; auth: KeyedAuth }): RouteNeed {
  const a = def.auth;
  return {
    scope: a.scope,
    permissions: a.permissions ?? [],
    write: a.write ?? def.method !== "get",
    module: a.module,
    signed: a.signed ?? false,
  };
}

export interface Reply {
  status?: number;
  data: unknown;
  /** Extra top-level fields beside data (message, pagination). */
  extra?: Record<string, unknown>;
}

export interface Context<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** Set on keyed routes. */
  principal: Principal;
  /** The caller to pass to backends. */
  caller: MessageInitShape<typeof CallerSchema>;
  clients: Clients;
  sourceIp: string;
  req: Request;
  res: Response;
}

export interface CooldownSpec<P, Q, B> {
  rule: CooldownRule;
  /** The resource the window is counted on (service id, "all", ...). */
  resource: (ctx: Context<P, Q, B>) => string;
}

export interface RouteDef<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> {
  method: HttpMethod;
  /** Express path relative to /api/v1, e.g. /vps/:id/start */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  /** "none": no key (documentation routes); every other route is keyed. */
  auth: KeyedAuth | "none";
  params?: P;
  query?: Q;
  body?: B;
  /** Schema of `data` in a success answer, for the OpenAPI document and the tests' contract check. */
  response?: z.ZodType;
  /** Fields of a success answer beside `data` (message, pagination on the VPS and dedicated lists). */
  responseExtra?: Record<string, z.ZodType>;
  /** An example `data` of a success answer, shown in the reference. */
  example?: unknown;
  /** Example values of the `responseExtra` fields. */
  exampleExtra?: Record<string, unknown>;
  /**
   * Refusals this route can answer with beyond those every route of its kind has (openapi.ts adds
   * 400, and for keyed routes 401, the 403s of the check order and 429, plus 5xx everywhere).
   */
  errors?: ErrorCode[];
  /** Served but left out of the OpenAPI document (the reference's own script files). */
  hidden?: boolean;
  /** The handler writes a document of this type itself (no envelope): the documentation routes. */
  rawContentType?: string;
  /** Moves money: an Idempotency-Key header makes a repeat return the first answer. */
  idempotent?: boolean;
  /** Another path for the operation with this operationId: kept, but a client needs only one. */
  aliasOf?: string;
  successStatus?: number;
  /**
   * The backend's field names (proto, snake_case) this route's wire shape spells differently, so
   * a backend's refusal names the field the caller sent (url → webhookUrl).
   */
  fieldNames?: Record<string, string>;
  cooldown?: CooldownSpec<z.output<P>, z.output<Q>, z.output<B>>;
  handler: (ctx: Context<z.output<P>, z.output<Q>, z.output<B>>) => Promise<Reply | undefined>;
}

/** Identity helper that keeps each route's schemas and handler types tied together. */
export function route<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
>(def: RouteDef<P, Q, B>): RouteDef {
  return def as unknown as RouteDef;
}
