/**
 * Coalesced calls (docs/architecture.md, "Coalesced calls"): a unary method whose calls reach a
 * client together, under load, goes out as one call of a companion method (billing's PayDocuments
 * for PayDocument), so the fixed cost of a call on both sides (its HTTP/2 stream, TLS records, the
 * serving pipeline's wake-ups) is paid once for them all. The server serves each call inside as a
 * unary call of its own method (rpc.ts, `coalescedHandler`); this file holds what both sides share,
 * the shape the companion's messages follow, and the client's side.
 *
 * The shape, checked when a server binds the method: the request has `calls`, each with `request`
 * (the unary method's request), `request_id` and `traceparent` (what a unary call carries as
 * metadata); the response has `answers`, one per call in order, each a oneof `answer` of
 * `response` (the unary method's response) or `status` (hb.platform.v1.CallStatus).
 */
import { create, type DescField, type DescMethodUnary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type CallStatus, CallStatusSchema, ErrorInfoSchema } from "@hb/contracts/hb/platform/v1/error_pb";
import { connectError } from "./connect-error.ts";
import { Histogram, metricsRegistry } from "./metrics.ts";
import {
  currentContext,
  type RequestContext,
  runInContext,
  runOutsideContext,
  traceparentOf,
} from "./request-context.ts";
import { childContext, endContext, SpanKind } from "./tracing.ts";

/** One call inside a coalesced request, as the companion's messages carry it. */
export interface CoalescedCall<Req> {
  request?: Req;
  requestId: string;
  traceparent: string;
}

/** One answer of a coalesced response. */
export interface CoalescedAnswer<Res> {
  answer:
    | { case: "response"; value: Res }
    | { case: "status"; value: CallStatus }
    | { case: undefined; value?: undefined };
}

/** A refusal as an answer carries it. */
export function callStatusOf(err: ConnectError): CallStatus {
  return create(CallStatusSchema, {
    code: err.code,
    message: err.rawMessage,
    info: err.findDetails(ErrorInfoSchema)[0],
  });
}

/** The refusal an answer carries, as the unary call would have thrown it. */
export function errorOfStatus(status: CallStatus): ConnectError {
  const details = status.info ? [{ desc: ErrorInfoSchema, value: status.info }] : [];
  return connectError(status.message, status.code as Code, details);
}

/**
 * Why `batch` cannot carry `item`'s calls, or undefined when its messages follow the shape above:
 * a server refuses to start with a companion that does not.
 */
export function coalescedShapeError(batch: DescMethodUnary, item: DescMethodUnary): string | undefined {
  const listed = (f: DescField | undefined) =>
    f?.fieldKind === "list" && f.listKind === "message" ? f.message : undefined;
  const call = listed(batch.input.field.calls);
  const request = call?.field.request;
  const text = (f: DescField | undefined) => f?.fieldKind === "scalar";
  if (
    request?.fieldKind !== "message" ||
    request.message !== item.input ||
    !text(call?.field.requestId) ||
    !text(call?.field.traceparent)
  )
    return `${batch.name}'s request must have calls { ${item.input.name} request; string request_id; string traceparent }`;
  const oneof = listed(batch.output.field.answers)?.oneofs.find((o) => o.localName === "answer");
  const cases = new Map(
    oneof?.fields.map((f) => [f.localName, f.fieldKind === "message" ? f.message : undefined]),
  );
  if (!oneof || cases.get("response") !== item.output || cases.get("status") !== CallStatusSchema)
    return `${batch.name}'s response must have answers { oneof answer { ${item.output.name} response; CallStatus status } }`;
  return undefined;
}

const coalescedCalls = new Histogram({
  name: "rpc_client_coalesced_calls",
  help: "Calls of a unary method sent together in one call of its coalescing companion, by the unary method",
  labelNames: ["method"] as const,
  buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
  registers: [metricsRegistry],
});

export interface CoalesceOptions {
  /** The unary method's path (/package.Service/Method): the client span's name. */
  method: string;
  /** At most this many calls go in one (the companion's max_items). */
  maxCalls: number;
}

/**
 * The unary method itself, for a server that does not serve the companion (Unimplemented: a
 * server older than this client, while a rolling update is under way). Each call of that
 * companion call is then sent as a unary call, in its caller's context, and answers as it would
 * have before there was a companion.
 */
export type UnaryFallback<Req, Res> = (request: Req) => Promise<Res>;

/** How long calls go alone after a server refused the companion, before it is asked again. */
const UNARY_FOR_MS = 10_000;

/**
 * `call(request)` answers as the unary method would (its response, or a rejection with the same
 * ConnectError), but the calls made in one turn of the event loop go out together as one call of
 * the companion (`send`), up to `maxCalls` at a time. A turn is what a loaded process serves at once
 * (every request whose bytes or Redis answer arrived together); an idle one sends each call alone,
 * one `setImmediate` later than a unary call would. A failure of the whole call (unavailable, past
 * its deadline) is each call's failure, as it would have been for each unary call.
 */
export function coalesce<Req, Res>(
  send: (request: { calls: CoalescedCall<Req>[] }) => Promise<{ answers: CoalescedAnswer<Res>[] }>,
  opts: CoalesceOptions,
  unary?: UnaryFallback<Req, Res>,
): (request: Req) => Promise<Res> {
  interface Waiting {
    call: CoalescedCall<Req>;
    /** The caller's context, for a unary call in its place. */
    caller: RequestContext | undefined;
    resolve(value: Res): void;
    reject(err: unknown): void;
  }
  const alone = (w: Waiting, call: UnaryFallback<Req, Res>) => {
    const request = w.call.request as Req;
    const sent = w.caller ? runInContext(w.caller, () => call(request)) : call(request);
    sent.then(w.resolve, w.reject);
  };
  let queue: Waiting[] = [];
  /** Until then the server is taken not to serve the companion, and calls go alone without asking. */
  let unaryUntil = 0;
  const sizes = coalescedCalls.labels(opts.method);
  const flush = () => {
    const taken = queue;
    queue = [];
    if (unary && Date.now() < unaryUntil) {
      for (const w of taken) alone(w, unary);
      return;
    }
    for (let i = 0; i < taken.length; i += opts.maxCalls) dispatch(taken.slice(i, i + opts.maxCalls));
  };
  const dispatch = (group: Waiting[]) => {
    sizes.observe(group.length);
    // The companion call belongs to no one request: its own span would name the first caller's.
    runOutsideContext(() => send({ calls: group.map((w) => w.call) })).then(
      ({ answers }) =>
        group.forEach((w, i) => {
          const a = answers[i]?.answer;
          if (a?.case === "response") w.resolve(a.value);
          else if (a?.case === "status") w.reject(errorOfStatus(a.value));
          else
            w.reject(
              connectError(`${opts.method}: no answer for call ${i + 1} of ${group.length}`, Code.Internal),
            );
        }),
      (err: unknown) => {
        if (unary && err instanceof ConnectError && err.code === Code.Unimplemented) {
          // Not asked again for a while: during a rolling update each turn's companion call would
          // otherwise be refused before its calls went alone.
          unaryUntil = Date.now() + UNARY_FOR_MS;
          for (const w of group) alone(w, unary);
          return;
        }
        for (const w of group) w.reject(err);
      },
    );
  };
  return (request) => {
    const caller = currentContext();
    // The call's own client span, as a unary call gets (rpc-context.ts, clientCall).
    const ctx = childContext(opts.method, SpanKind.CLIENT);
    // Without an exporter the context is the caller's own, whose span is not this call's to end.
    const own = ctx !== caller;
    return new Promise<Res>((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush);
      queue.push({
        call: { request, requestId: ctx?.requestId ?? "", traceparent: ctx ? traceparentOf(ctx) : "" },
        caller,
        resolve,
        reject,
      });
    }).then(
      (value) => {
        if (own) endContext(ctx);
        return value;
      },
      (err: unknown) => {
        if (own) endContext(ctx, String(err));
        throw err;
      },
    );
  };
}
