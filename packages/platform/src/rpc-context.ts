/**
 * The request context across RPCs: clients put the request id and traceparent in the call's
 * metadata, servers read them back into a context of their own (a child span), and every
 * finished call is counted and timed by method and code. rpc.ts calls these at its few seams.
 */
import type { Interceptor } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "./log.ts";
import { observeRpc } from "./metrics.ts";
import {
  currentContext,
  REQUEST_ID_HEADER,
  type RequestContext,
  TRACEPARENT_HEADER,
  traceparentOf,
} from "./request-context.ts";
import { beginContext, childContext, endContext, SpanKind } from "./tracing.ts";

export interface ServerCall {
  ctx: RequestContext;
  method: string;
  started: number;
}

/** Starts the server side of a call; `header` reads one incoming metadata value. */
export function beginServerCall(method: string, header: (name: string) => string | undefined): ServerCall {
  const ctx = beginContext(method, SpanKind.SERVER, {
    requestId: header(REQUEST_ID_HEADER),
    traceparent: header(TRACEPARENT_HEADER),
  });
  return { ctx, method, started: performance.now() };
}

/** Ends a call with its gRPC status code (0 = OK): metrics, span and a debug line. */
export function endServerCall(call: ServerCall, code: number, log: Logger, failure?: string): void {
  const ms = performance.now() - call.started;
  observeRpc(call.method, code, ms / 1000);
  endContext(call.ctx, code === 0 ? undefined : (failure ?? `code ${code}`));
  log.debug("rpc handled", { method: call.method, code, ms: Math.round(ms * 10) / 10 });
}

/** The first value of a grpc-js metadata key as text. */
export function metadataText(md: grpc.Metadata, name: string): string | undefined {
  const v = md.get(name)[0];
  return typeof v === "string" ? v : undefined;
}

const noMetadata = new grpc.Metadata();
const nothing = () => {};

export interface ClientCall {
  metadata: grpc.Metadata;
  /** Ends the client span, when one was started. */
  done(failure?: string): void;
}

/**
 * Metadata for an outgoing grpc-js call made in the current context. Outside any context, or
 * with no exporter, no span is started and nothing is allocated beyond the metadata itself.
 */
export function clientCall(method: string): ClientCall {
  const ctx = childContext(method, SpanKind.CLIENT);
  if (!ctx) return { metadata: noMetadata, done: nothing };
  const md = new grpc.Metadata();
  md.set(REQUEST_ID_HEADER, ctx.requestId);
  md.set(TRACEPARENT_HEADER, traceparentOf(ctx));
  if (ctx === currentContext()) return { metadata: md, done: nothing };
  return { metadata: md, done: (failure) => endContext(ctx, failure) };
}

/** The same for connect-node clients, as an interceptor. */
export const contextInterceptor: Interceptor = (next) => async (req) => {
  const ctx = childContext(req.url, SpanKind.CLIENT);
  if (!ctx) return next(req);
  req.header.set(REQUEST_ID_HEADER, ctx.requestId);
  req.header.set(TRACEPARENT_HEADER, traceparentOf(ctx));
  const own = ctx !== currentContext();
  try {
    const res = await next(req);
    if (own) endContext(ctx);
    return res;
  } catch (err) {
    if (own) endContext(ctx, String(err));
    throw err;
  }
};
