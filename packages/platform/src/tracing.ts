/**
 * Traces with the OpenTelemetry SDK, exported over OTLP only when an endpoint is configured
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). Without one no span is
 * recorded: a context still gets a trace id (the caller's, or a new random one) and a span id, so
 * logs, RPC metadata and event headers carry the same ids at the cost of two random numbers.
 */
import { randomUUID } from "node:crypto";
import {
  type Attributes,
  ROOT_CONTEXT,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { currentContext, type RequestContext, requestIdOf } from "./request-context.ts";

export { SpanKind };

let tracer: Tracer | undefined;

// Ids from Node's pooled randomUUID (a fraction of the SDK's RandomIdGenerator's cost, measured):
// 32 hex digits of which all but the version and variant digits are random.
const newTraceId = () => randomUUID().replaceAll("-", "");
const newSpanId = () => randomUUID().replaceAll("-", "").slice(-16);

export interface Tracing {
  /** True when spans are recorded and exported. */
  exporting: boolean;
  /** Sends the spans still buffered. */
  shutdown(): Promise<void>;
}

/** Whether the environment asks for traces to be exported (the OTel SDK's own variables). */
function otlpConfigured(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED === "true" || env.OTEL_TRACES_EXPORTER === "none") return false;
  return !!(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/**
 * Call once at start-up. The exporter reads the standard OTEL_EXPORTER_OTLP_* variables itself.
 * The SDK and the exporter are loaded only when an endpoint is configured: loading them costs each
 * process about 18 MB of RSS (measured, docs/benchmarks.md) for spans that would never be recorded.
 */
export async function initTracing(service: string, env: NodeJS.ProcessEnv = process.env): Promise<Tracing> {
  if (!otlpConfigured(env)) return { exporting: false, shutdown: async () => {} };
  const [{ OTLPTraceExporter }, { resourceFromAttributes }, { BatchSpanProcessor, TracerProvider }] =
    await Promise.all([
      import("@opentelemetry/exporter-trace-otlp-proto"),
      import("@opentelemetry/resources"),
      import("@opentelemetry/sdk-trace"),
    ]);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME || service }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })],
  });
  tracer = provider.getTracer("hb-platform");
  return {
    exporting: true,
    shutdown: async () => {
      tracer = undefined;
      await provider.shutdown();
    },
  };
}

// W3C Trace Context: version-traceid-spanid-flags; a future version may append fields. At most
// one white-space character on either side, as the OpenTelemetry propagator reads it.
const traceparentPattern = /^\s?([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?\s?$/;
const zeros = /^0+$/;

/**
 * The span context a W3C traceparent names, or undefined when it is missing or malformed. Parsed
 * here rather than through the SDK's W3CTraceContextPropagator, which builds a context per call
 * (several times the cost on every RPC); a property test checks the two agree.
 */
export function parseTraceparent(value: string | undefined | null): SpanContext | undefined {
  if (!value) return undefined;
  const m = traceparentPattern.exec(value);
  if (!m || m[1] === "ff" || (m[1] === "00" && m[5] !== undefined)) return undefined;
  if (zeros.test(m[2]) || zeros.test(m[3])) return undefined;
  return { traceId: m[2], spanId: m[3], traceFlags: Number.parseInt(m[4], 16), isRemote: true };
}

export interface Incoming {
  requestId?: string | null;
  traceparent?: string | null;
}

/**
 * A context for work arriving from elsewhere (an HTTP request, an RPC, an event): the caller's
 * request id when well formed, a span whose parent is the caller's traceparent when valid.
 */
export function beginContext(
  name: string,
  kind: SpanKind,
  incoming: Incoming,
  attributes?: Attributes,
): RequestContext {
  return spanContext(
    name,
    kind,
    requestIdOf(incoming.requestId),
    parseTraceparent(incoming.traceparent),
    attributes,
  );
}

/**
 * A child of the current context for an outgoing call (an RPC client span). Without an exporter
 * the current context itself is returned: there is no span to record.
 */
export function childContext(
  name: string,
  kind: SpanKind,
  attributes?: Attributes,
): RequestContext | undefined {
  const parent = currentContext();
  if (!parent || !tracer) return parent;
  return spanContext(name, kind, parent.requestId, { ...parentOf(parent), isRemote: false }, attributes);
}

/** Ends the context's span, marked as an error when `failure` names one. */
export function endContext(ctx: RequestContext | undefined, failure?: string): void {
  const span = ctx?.span;
  if (!span) return;
  if (failure) span.setStatus({ code: SpanStatusCode.ERROR, message: failure });
  span.end();
}

const parentOf = (ctx: RequestContext): SpanContext => ({
  traceId: ctx.traceId,
  spanId: ctx.spanId,
  traceFlags: ctx.traceFlags,
});

function spanContext(
  name: string,
  kind: SpanKind,
  requestId: string,
  parent: SpanContext | undefined,
  attributes?: Attributes,
): RequestContext {
  if (tracer) {
    const parentCtx = parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
    const span = tracer.startSpan(name, { kind, attributes }, parentCtx);
    span.setAttribute("request.id", requestId);
    const sc = span.spanContext();
    return { requestId, traceId: sc.traceId, spanId: sc.spanId, traceFlags: sc.traceFlags, span };
  }
  return {
    requestId,
    traceId: parent?.traceId ?? newTraceId(),
    spanId: newSpanId(),
    traceFlags: parent?.traceFlags ?? 0,
  };
}
