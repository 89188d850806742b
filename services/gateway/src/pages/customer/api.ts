import { create } from "@bufbuild/protobuf";
import { type Principal, PrincipalSchema } from "@hb/contracts/hb/auth/v1/auth_pb";
import { PartnerStatusSchema } from "@hb/contracts/hb/auth/v1/partners_pb";
import type { Session } from "@hb/contracts/hb/auth/v1/portal_pb";
import { enumWord } from "@hb/platform";
import type { Response } from "express";
import type { ApiAnswer, ApiCall, ApiRefusal } from "../../in-process.ts";
import { sessionOf } from "../session.ts";

/**
 * One customer operation of the API as the portal uses it: the route's method and path template
 * exactly as the gateway's route table spells them, and the portal page or form that offers it.
 * The parity test (test/portal-parity.test.ts) compares the route table with these.
 */
export interface Operation {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  /** Where a person finds it in the portal. */
  page: string;
}

const registry: Operation[] = [];

/** Declares an operation the portal offers; the table of them is what the parity test reads. */
export function operation(method: Operation["method"], path: string, page: string): Operation {
  const op = { method, path, page };
  registry.push(op);
  return op;
}

/** Every operation the portal's pages offer (filled as the page modules load). */
export const portalOperations = (): readonly Operation[] => registry;

/** The signed-in person as the API's principal: the same fields a key of theirs would carry. */
export function sessionPrincipal(s: Session): Principal {
  return create(PrincipalSchema, {
    customerId: s.customerId,
    personId: s.subjectId,
    permissions: s.permissions,
    isOwner: s.isOwner,
    accountStatus: s.customerStatus,
    personName: s.name,
    personEmail: s.email,
    currency: s.currency,
  });
}

/** An API refusal, carried to the page that shows it (beside a field, or as the page's error). */
export class Refused extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: { field: string; message: string }[];
  constructor(status: number, body: ApiRefusal) {
    super(body.error);
    this.status = status;
    this.code = body.code;
    this.details = body.details ?? [];
  }
}

export interface CallInput {
  params?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** The form's one-time token, sent as the Idempotency-Key. */
  token?: string;
}

/** A success envelope: `data` and whatever the route puts beside it (pagination). */
export type Envelope<T> = { data: T } & Record<string, unknown>;

export type PageApi = <T>(op: Operation, input?: CallInput) => Promise<Envelope<T>>;

/** Fills a path template's `:name` parts; a value is one path segment, encoded. */
function fillPath(template: string, params: Record<string, string> = {}): string {
  return template.replace(/:([A-Za-z]+)/g, (_m, name: string) => {
    const v = params[name];
    if (v === undefined) throw new Error(`path parameter ${name} missing for ${template}`);
    return encodeURIComponent(v);
  });
}

/** The API as the signed-in person of this page request. */
export function pageApi(call: ApiCall, res: Response): PageApi {
  const session = sessionOf(res);
  const principal = sessionPrincipal(session);
  // The reseller routes ask the partner status auth read for this session (in-process.ts).
  const partnerStatus = session.partnerStatus ? enumWord(PartnerStatusSchema, session.partnerStatus) : "";
  return async <T>(op: Operation, input: CallInput = {}) => {
    const answer: ApiAnswer = await call(principal, op.method, fillPath(op.path, input.params), {
      query: input.query,
      body: input.body,
      idempotencyKey: input.token,
      requestId: res.getHeader("x-request-id")?.toString(),
      partnerStatus,
    });
    if (answer.body.success !== true) throw new Refused(answer.status, answer.body as unknown as ApiRefusal);
    return answer.body as Envelope<T>;
  };
}
