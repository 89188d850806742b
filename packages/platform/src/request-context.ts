/**
 * The request a piece of work belongs to: its request id and its place in a trace. Held in
 * AsyncLocalStorage so every log line, outgoing RPC, outbox row and event written while serving
 * the request carries it without being passed by hand.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import type { Span } from "@opentelemetry/api";

export interface RequestContext {
  readonly requestId: string;
  readonly traceId: string;
  /** This process's span; a child of the caller's. */
  readonly spanId: string;
  readonly traceFlags: number;
  /** The recording span, only when traces are exported (tracing.ts). */
  readonly span?: Span;
}

/** Header and metadata names, lower case as HTTP/2 and gRPC metadata want them. */
export const REQUEST_ID_HEADER = "x-request-id";
export const TRACEPARENT_HEADER = "traceparent";

const storage = new AsyncLocalStorage<RequestContext>();

export const currentContext = (): RequestContext | undefined => storage.getStore();

export const runInContext = <T>(ctx: RequestContext, fn: () => T): T => storage.run(ctx, fn);

/** Work that belongs to no one request (a call made for many). */
export const runOutsideContext = <T>(fn: () => T): T => storage.exit(fn);

// A token of 1 to 128 characters from a set that cannot break a log line, a header or a query:
// anything else from a caller is replaced, never echoed.
const wellFormed = /^[A-Za-z0-9._:-]{1,128}$/;

export const isWellFormedRequestId = (value: string): boolean => wellFormed.test(value);

/** A caller's request id when well formed, else a new one (`req_<uuid>`). */
export function requestIdOf(incoming: string | undefined | null): string {
  return incoming && wellFormed.test(incoming) ? incoming : `req_${randomUUID()}`;
}

/** The W3C traceparent naming this context's span as the parent of the next hop. */
export function traceparentOf(ctx: RequestContext): string {
  return `00-${ctx.traceId}-${ctx.spanId}-${ctx.traceFlags & 1 ? "01" : "00"}`;
}
