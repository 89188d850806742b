import type { IncomingMessage, ServerResponse } from "node:http";
import type { Principal } from "@hb/contracts/hb/auth/v1/auth_pb";
import inject from "light-my-request";

/**
 * The portal's way into the customer API (docs/architecture.md, "The portal on the API"): a page
 * sends the API request to the gateway's own Express app in process (light-my-request builds the
 * request and response objects, no socket), with the signed-in person's principal attached to that
 * request object. The request then runs the whole API path a keyed request runs (validation, the
 * route's permission, suspension and module check, cool-downs, idempotency, the backends' rules,
 * the error table and the envelope); only the credential differs.
 *
 * The principal lives in a WeakMap keyed by the request object this module created: a request that
 * came over the network is never in it, so no header, cookie or body can make one a session call.
 */
const sessionCalls = new WeakMap<IncomingMessage, Principal>();

/** The principal of a request the portal made in process; undefined for every network request. */
export const sessionPrincipalOf = (req: IncomingMessage): Principal | undefined => sessionCalls.get(req);

/**
 * The session's reseller partner status word ("active", "pending", "suspended"; absent for an
 * account that is no partner), as auth re-read it for the page request. On the reseller routes
 * it stands in for the status auth.Verify reads beside the signature (see sessionCheck in app.ts).
 */
const sessionPartners = new WeakMap<IncomingMessage, string>();
export const sessionPartnerStatusOf = (req: IncomingMessage): string => sessionPartners.get(req) ?? "";

export type Dispatch = (req: IncomingMessage, res: ServerResponse) => void;

/** A refusal's envelope fields (envelope.ts). */
export interface ApiRefusal {
  success: false;
  error: string;
  code: string;
  details?: { field: string; message: string }[];
  retry_after_seconds?: number;
}

export interface ApiAnswer {
  status: number;
  /** The envelope as the API sends it: {success: true, data, ...extra} or an ApiRefusal. */
  body: Record<string, unknown>;
}

export interface CallOptions {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** Sent as the Idempotency-Key header: the form's one-time token on money-moving routes. */
  idempotencyKey?: string;
  /** The page request's id, so the API request's logs carry the same one. */
  requestId?: string;
  /** The session's partner status word, for the reseller routes ("" or absent: no partner). */
  partnerStatus?: string;
}

export type ApiCall = (
  principal: Principal,
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  o?: CallOptions,
) => Promise<ApiAnswer>;

/**
 * Express gives each request and response the prototype of its own app.request/app.response, which
 * drops light-my-request's methods (the response's write/end that capture the payload, the
 * request's _read that feeds the body): they are pinned on the objects themselves first.
 */
function keepOwnMethods(o: object): void {
  const proto = Object.getPrototypeOf(o) as object;
  for (const name of Object.getOwnPropertyNames(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (name !== "constructor" && typeof d?.value === "function") {
      Object.defineProperty(o, name, { value: d.value, writable: true, configurable: true });
    }
  }
}

/** `dispatch` is read on every call: the app that serves the pages is the one being called. */
export function inProcessApi(dispatch: () => Dispatch, apiPrefix: string): ApiCall {
  return async (principal, method, path, o = {}) => {
    const query: Record<string, string> = {};
    for (const [k, v] of Object.entries(o.query ?? {})) if (v !== undefined && v !== "") query[k] = String(v);
    const headers: Record<string, string> = { accept: "application/json" };
    if (o.idempotencyKey) headers["idempotency-key"] = o.idempotencyKey;
    if (o.requestId) headers["x-request-id"] = o.requestId;
    const withBody = o.body !== undefined;
    if (withBody) headers["content-type"] = "application/json";
    const res = await inject(
      (req, res) => {
        sessionCalls.set(req, principal);
        if (o.partnerStatus) sessionPartners.set(req, o.partnerStatus);
        keepOwnMethods(req);
        keepOwnMethods(res);
        dispatch()(req, res);
      },
      {
        method,
        url: { pathname: `${apiPrefix}${path}`, query },
        headers,
        ...(withBody ? { payload: JSON.stringify(o.body) } : {}),
      },
    );
    let body: Record<string, unknown>;
    try {
      body = res.json() as Record<string, unknown>;
    } catch {
      throw new Error(`${method} ${path} answered ${res.statusCode} without JSON`);
    }
    return { status: res.statusCode, body };
  };
}
