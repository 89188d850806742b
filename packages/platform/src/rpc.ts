/**
 * The serving side of the transport (clients: rpc-client.ts; what both share: rpc-wire.ts).
 * Handlers are written once in Connect's ServiceImpl shape with protobuf-es types; this file
 * serves them over plain gRPC with @grpc/grpc-js (the cheaper transport on the hot path, see
 * docs/benchmarks.md) or with connect-node. Both speak the gRPC protocol on the wire, so any gRPC client, probe or tool works against either. Either way a
 * request is checked against the rules its contract declares (request-rules.ts) before its handler.
 * Every connection is mutual TLS and every call is checked against the allow-list (allow-list.ts)
 * by the caller's certificate (service-identity.ts) before anything else.
 *
 * Every served call, unary or stream, on either transport, goes through one pipeline
 * (`serveUnary`, `serveStream`): its context and metrics open, the allow-list, the request rules,
 * the handler, then errors leave as a ConnectError (unexpected ones logged) and the metrics close
 * with the call's code. A transport only adapts its call object to it.
 */
import http2 from "node:http2";
import type { TLSSocket } from "node:tls";
import {
  create,
  type DescMethodServerStreaming,
  type DescMethodUnary,
  type DescService,
} from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type ContextValues,
  createContextKey,
  createContextValues,
  type HandlerContext,
  type ServiceImpl,
} from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import { Health, HealthCheckResponse_ServingStatus } from "@hb/contracts/grpc/health/v1/health_pb";
import { type CallerCheck, callerCheck } from "./allow-list.ts";
import { callerIdentity } from "./caller-identity.ts";
import { connectError, connectErrorFrom } from "./connect-error.ts";
import { apiError } from "./errors.ts";
import type { Logger } from "./log.ts";
import { REQUEST_ID_HEADER, runInContext, TRACEPARENT_HEADER } from "./request-context.ts";
import { type CoalescedCall, callStatusOf, coalescedShapeError } from "./rpc-coalesce.ts";
import { beginServerCall, endServerCall, metadataText } from "./rpc-context.ts";
import {
  connectNode,
  grpcMethodDefinition,
  grpcStatusOf,
  streamingMethods,
  type Transport,
  unaryMethods,
} from "./rpc-wire.ts";
import { identityOf, type TlsIdentity } from "./service-identity.ts";
import { isDependencyUnavailable } from "./unavailable.ts";

export type { Transport } from "./rpc-wire.ts";

/**
 * The request rules (protovalidate and its CEL interpreter), loaded only by a process that serves
 * RPC: the gateway, which only calls, carried about 5 MB of resident memory it never used for
 * them (issue 13's idle memory).
 */
let requestRulesModule: Promise<typeof import("./request-rules.ts")> | undefined;
const requestRules = () => {
  requestRulesModule ??= import("./request-rules.ts");
  return requestRulesModule;
};

export type ServiceBinding = {
  desc: DescService;
  // biome-ignore lint/suspicious/noExplicitAny: a registry of heterogeneous services; each pair is typed where it is built
  impl: Partial<ServiceImpl<any>>;
  /** Coalesced methods, each naming the unary method whose calls it carries (rpc-coalesce.ts). */
  coalesced?: Record<string, string>;
};
export const bind = <S extends DescService>(
  desc: S,
  impl: Partial<ServiceImpl<S>>,
  /** A companion method (served here, not in `impl`) → the unary method whose calls it carries. */
  coalesced?: Partial<Record<keyof ServiceImpl<S>, keyof ServiceImpl<S>>>,
): ServiceBinding => ({ desc, impl, coalesced: coalesced as Record<string, string> | undefined });

export interface RpcServer {
  port: number;
  /** Stops accepting, lets in-flight calls finish (up to graceMs), then closes. */
  close(graceMs?: number): Promise<void>;
}

type UnaryFn = (req: unknown, ctx: HandlerContext) => unknown;
const handlerOf = (b: ServiceBinding, m: DescMethodUnary) => b.impl[m.localName] as UnaryFn | undefined;

type StreamFn = (req: unknown, ctx: HandlerContext) => AsyncIterable<unknown>;
const streamHandlerOf = (b: ServiceBinding, m: DescMethodServerStreaming) =>
  b.impl[m.localName] as StreamFn | undefined;

const healthBinding = bind(Health, {
  check: () => ({ status: HealthCheckResponse_ServingStatus.SERVING }),
});

/** Errors that were not raised on purpose are logged with their cause and leave as a generic Internal. */
function toConnectError(err: unknown, log: Logger, method: string): ConnectError {
  if (err instanceof ConnectError) {
    if (err.code === Code.Internal || err.code === Code.Unknown)
      log.error("rpc failed", { method, err, cause: err.cause });
    return err;
  }
  if (isDependencyUnavailable(err)) {
    log.warn("rpc failed: a dependency is unavailable", { method, err });
    return apiError("SERVICE_UNAVAILABLE", "a dependency is unavailable");
  }
  log.error("rpc handler threw", { method, err });
  return connectError("internal error", Code.Internal);
}

/** What every call of one method passes before its handler: the allow-list, then the request rules. */
interface MethodGate {
  path: string;
  log: Logger;
  admit(caller: string | undefined, req: unknown): void;
}

function gateOf(
  desc: DescService,
  method: DescMethodUnary | DescMethodServerStreaming,
  allow: CallerCheck,
  requestCheck: RequestCheckOf,
  log: Logger,
): MethodGate {
  const path = `/${desc.typeName}/${method.name}`;
  const check = requestCheck(method.input);
  return {
    path,
    log,
    admit(caller, req) {
      const refused = allow(caller, path);
      if (refused) throw refused;
      check?.(req as never);
    },
  };
}

type RequestCheckOf = Awaited<ReturnType<typeof requestRules>>["requestCheck"];

/** A call's own parts, as its transport hands them over. */
interface CallParts {
  req: unknown;
  ctx: HandlerContext;
  caller: string | undefined;
  header: (name: string) => string | undefined;
}

/**
 * The handler of a coalesced method (rpc-coalesce.ts; docs/architecture.md, "Coalesced calls"):
 * each call inside is served through its own method's pipeline, as a unary call of that method
 * would be (the allow-list, its request rules, its handler and metrics, a context with the call's
 * own request id and trace parent), all at once; a refused call's status takes its answer's place.
 * Undefined for a method that is not coalesced; a binding that coalesces wrongly fails the start.
 */
function coalescedHandler(
  binding: ServiceBinding,
  method: DescMethodUnary,
  allow: CallerCheck,
  requestCheck: RequestCheckOf,
  log: Logger,
): UnaryFn | undefined {
  const { desc } = binding;
  const itemName = binding.coalesced?.[method.localName];
  if (!itemName) return undefined;
  const item = unaryMethods(desc).find((m) => m.localName === itemName);
  const itemFn = item && handlerOf(binding, item);
  if (!item || !itemFn)
    throw new Error(`${desc.typeName}.${method.name} coalesces ${itemName}, which is not served`);
  const shapeError = coalescedShapeError(method, item);
  if (shapeError) throw new Error(shapeError);
  const gate = gateOf(desc, item, allow, requestCheck, log);
  return (req, ctx) => {
    const caller = callerOfCall(ctx);
    const { calls } = req as { calls: CoalescedCall<unknown>[] };
    const answers = calls.map((c) =>
      serveUnary(gate, itemFn, binding.impl, {
        req: c.request ?? create(item.input),
        ctx,
        caller,
        header: (k) =>
          (k === REQUEST_ID_HEADER ? c.requestId : k === TRACEPARENT_HEADER ? c.traceparent : "") ||
          undefined,
      }).then(
        (value) => ({ answer: { case: "response", value } }),
        (err: unknown) => ({ answer: { case: "status", value: callStatusOf(connectErrorFrom(err)) } }),
      ),
    );
    return Promise.all(answers).then((all) => ({ answers: all }));
  };
}

/** The pipeline of a unary call; rejects with a ConnectError. */
function serveUnary(gate: MethodGate, fn: UnaryFn, impl: object, call: CallParts): Promise<unknown> {
  const served = beginServerCall(gate.path, call.header);
  return runInContext(served.ctx, () =>
    Promise.resolve()
      .then(() => {
        gate.admit(call.caller, call.req);
        return fn.call(impl, call.req, call.ctx);
      })
      .then(
        (res) => {
          endServerCall(served, 0, gate.log);
          return res;
        },
        (err: unknown) => {
          const ce = toConnectError(err, gate.log, gate.path);
          endServerCall(served, ce.code, gate.log, ce.rawMessage);
          throw ce;
        },
      ),
  );
}

/**
 * The pipeline of a server-streaming call: the handler's messages, each step in the call's context
 * (a generator cannot run inside runInContext); throws a ConnectError. A consumer that stops early
 * (the caller went away) ends the call as cancelled.
 */
async function* serveStream(
  gate: MethodGate,
  fn: StreamFn,
  impl: object,
  call: CallParts,
): AsyncGenerator<unknown> {
  const served = beginServerCall(gate.path, call.header);
  let code: number | undefined;
  let failure: string | undefined;
  let messages: AsyncIterator<unknown> | undefined;
  try {
    messages = runInContext(served.ctx, () => {
      gate.admit(call.caller, call.req);
      return fn.call(impl, call.req, call.ctx)[Symbol.asyncIterator]();
    });
    for (;;) {
      const it = messages;
      const step = await runInContext(served.ctx, () => it.next());
      if (step.done) break;
      yield step.value;
    }
    code = 0;
  } catch (err) {
    if (call.ctx.signal.aborted) {
      code = Code.Canceled;
      return;
    }
    const ce = toConnectError(err, gate.log, gate.path);
    code = ce.code;
    failure = ce.rawMessage;
    throw ce;
  } finally {
    if (code === undefined) {
      code = Code.Canceled;
      await messages?.return?.();
    }
    endServerCall(served, code, gate.log, failure);
  }
}

/** A ConnectError as grpc-js sends it: the code, the message and the ErrorInfo detail as binary metadata. */

export async function serveRpc(
  transport: Transport,
  port: number,
  bindings: ServiceBinding[],
  log: Logger,
  tls: TlsIdentity,
  healthPort?: number,
): Promise<RpcServer> {
  const all = [healthBinding, ...bindings];
  const server = await (transport === "grpc-js"
    ? serveGrpcJs(port, all, log, tls)
    : serveConnect(port, all, log, tls));
  if (healthPort === undefined) return server;
  const probe = await serveGrpcJs(healthPort, [healthBinding], log, "plaintext");
  return {
    port: server.port,
    close: async (graceMs) => {
      await probe.close(0);
      await server.close(graceMs);
    },
  };
}

/**
 * A grpc-js call's handler context, as Connect's `createHandlerContext` builds it for a call without
 * a timeout, except that its signal and headers are made on first use. Connect's makes three
 * `Headers` and an `AbortController` at every call, and no handler here reads those headers: the
 * first `Headers` loads Node's bundled undici (fetch's implementation), which took about 9 MB of
 * each idle service's resident memory (docs/benchmarks.md, issue 31 §5, second pass).
 */
class GrpcHandlerContext implements HandlerContext {
  readonly protocolName = "grpc";
  readonly requestMethod = "POST";
  readonly service: DescService;
  readonly method: DescMethodUnary | DescMethodServerStreaming;
  readonly url: string;
  readonly values: ContextValues;
  #signal: AbortSignal | undefined;
  #requestHeader: Headers | undefined;
  #responseHeader: Headers | undefined;
  #responseTrailer: Headers | undefined;
  constructor(
    service: DescService,
    method: DescMethodUnary | DescMethodServerStreaming,
    url: string,
    values: ContextValues,
    signal?: AbortSignal,
  ) {
    this.service = service;
    this.method = method;
    this.url = url;
    this.values = values;
    this.#signal = signal;
  }
  /** Never aborted for a unary call: grpc-js enforces its deadline (see the unary handler). */
  get signal(): AbortSignal {
    this.#signal ??= new AbortController().signal;
    return this.#signal;
  }
  timeoutMs(): number | undefined {
    return undefined;
  }
  get requestHeader(): Headers {
    this.#requestHeader ??= new Headers();
    return this.#requestHeader;
  }
  get responseHeader(): Headers {
    this.#responseHeader ??= new Headers();
    return this.#responseHeader;
  }
  get responseTrailer(): Headers {
    this.#responseTrailer ??= new Headers();
    return this.#responseTrailer;
  }
}

/**
 * "plaintext" is the probe port (HEALTH_PORT): the health service alone, without TLS, for the
 * kubelet's gRPC probes, which cannot present a client certificate. It answers SERVING or nothing
 * and serves no other definition, so the allow-list has nothing to guard there.
 */
async function serveGrpcJs(
  port: number,
  bindings: ServiceBinding[],
  log: Logger,
  tls: TlsIdentity | "plaintext",
): Promise<RpcServer> {
  const { requestCheck } = await requestRules();
  const server = new grpc.Server({ "grpc.max_receive_message_length": 8 * 1024 * 1024 });
  // Open streams end when the server closes, so shutdown does not wait out the grace period.
  const openStreams = new Set<AbortController>();
  for (const binding of bindings) {
    const { desc, impl } = binding;
    const allow: CallerCheck = tls === "plaintext" ? () => undefined : callerCheck(desc, log);
    const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
    const handlers: grpc.UntypedServiceImplementation = {};
    for (const method of unaryMethods(desc)) {
      const fn = handlerOf(binding, method) ?? coalescedHandler(binding, method, allow, requestCheck, log);
      if (!fn) continue;
      const gate = gateOf(desc, method, allow, requestCheck, log);
      definition[method.localName] = grpcMethodDefinition(gate.path, method, false);
      handlers[method.localName] = (
        call: grpc.ServerUnaryCall<unknown, unknown>,
        callback: grpc.sendUnaryData<unknown>,
      ) => {
        // The deadline is enforced by grpc-js itself; the context carries no timer and is never
        // aborted, because aborting builds a DOMException per call (measured: ~10% of auth's CPU).
        const caller = callerIdentity(call);
        const ctx = new GrpcHandlerContext(
          desc,
          method,
          gate.path,
          createContextValues().set(callerKey, caller).set(deadlineKey, grpcDeadlineMs(call.getDeadline())),
        );
        serveUnary(gate, fn, impl, {
          req: call.request,
          ctx,
          caller,
          header: (k) => metadataText(call.metadata, k),
        }).then(
          (res) => callback(null, create(method.output, res as never)),
          (err: unknown) => callback(grpcStatusOf(connectErrorFrom(err))),
        );
      };
    }
    for (const method of streamingMethods(desc)) {
      const fn = streamHandlerOf(binding, method);
      if (!fn) continue;
      const gate = gateOf(desc, method, allow, requestCheck, log);
      definition[method.localName] = grpcMethodDefinition(gate.path, method, true);
      handlers[method.localName] = (call: grpc.ServerWritableStream<unknown, unknown>) => {
        const cancelled = new AbortController();
        openStreams.add(cancelled);
        call.on("cancelled", () => cancelled.abort());
        const ctx = new GrpcHandlerContext(desc, method, gate.path, createContextValues(), cancelled.signal);
        const messages = serveStream(gate, fn, impl, {
          req: call.request,
          ctx,
          caller: callerIdentity(call),
          header: (k) => metadataText(call.metadata, k),
        });
        (async () => {
          for await (const message of messages) {
            if (cancelled.signal.aborted) break;
            // Backpressure: a slow reader holds the producer instead of growing a buffer.
            if (!call.write(create(method.output, message as never)))
              await new Promise((r) => call.once("drain", r));
          }
          call.end();
        })()
          .catch((err: unknown) => {
            if (!cancelled.signal.aborted) call.emit("error", grpcStatusOf(connectErrorFrom(err)));
          })
          .finally(() => openStreams.delete(cancelled));
      };
    }
    server.addService(definition, handlers);
  }
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `0.0.0.0:${port}`,
      tls === "plaintext"
        ? grpc.ServerCredentials.createInsecure()
        : // true: a client without a certificate from the CA is refused at the handshake.
          grpc.ServerCredentials.createSsl(tls.ca, [{ private_key: tls.key, cert_chain: tls.cert }], true),
      (err, p) => (err ? reject(err) : resolve(p)),
    ),
  );
  return {
    port: bound,
    close: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        for (const stream of openStreams) stream.abort();
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}

/** The caller's service name, taken from its certificate when the request arrives. */
const callerKey = createContextKey<string | undefined>(undefined, { description: "caller identity" });
/** When the caller stops waiting (epoch ms); none when it set no deadline. */
const deadlineKey = createContextKey<number | undefined>(undefined, { description: "call deadline" });

/**
 * The identity (certificate name) of the service that made this call. Handlers that record who
 * acted (a staff write) take it from here, never from a field the caller fills in.
 */
export const callerOfCall = (ctx: HandlerContext | undefined): string | undefined =>
  ctx?.values.get(callerKey);

/**
 * Milliseconds left before the caller gives up on this call, or undefined when it set no
 * deadline. A handler whose work must not outlive its caller (a staff money write) bounds its
 * transaction by it.
 */
export function msLeftOfCall(ctx: HandlerContext | undefined): number | undefined {
  const deadline = ctx?.values.get(deadlineKey) ?? (ctx ? epochDeadline(ctx.timeoutMs()) : undefined);
  return deadline === undefined ? undefined : deadline - Date.now();
}
const epochDeadline = (ms: number | undefined) => (ms === undefined ? undefined : Date.now() + ms);

/** A grpc-js deadline as epoch ms; Infinity (none) as undefined. */
function grpcDeadlineMs(d: grpc.Deadline): number | undefined {
  const ms = d instanceof Date ? d.getTime() : d;
  return Number.isFinite(ms) ? ms : undefined;
}

async function serveConnect(
  port: number,
  bindings: ServiceBinding[],
  log: Logger,
  tls: TlsIdentity,
): Promise<RpcServer> {
  const { requestCheck } = await requestRules();
  const routes = (router: ConnectRouter) => {
    for (const binding of bindings) {
      const { desc, impl } = binding;
      const allow = callerCheck(desc, log);
      const wrapped: Partial<ServiceImpl<DescService>> = {};
      const callOf = (req: unknown, ctx: HandlerContext): CallParts => ({
        req,
        ctx,
        caller: ctx.values.get(callerKey),
        header: (k) => ctx.requestHeader.get(k) ?? undefined,
      });
      for (const method of unaryMethods(desc)) {
        const fn = handlerOf(binding, method) ?? coalescedHandler(binding, method, allow, requestCheck, log);
        if (!fn) continue;
        const gate = gateOf(desc, method, allow, requestCheck, log);
        // biome-ignore lint/suspicious/noExplicitAny: same shape as the handler it wraps
        (wrapped as Record<string, any>)[method.localName] = (req: unknown, ctx: HandlerContext) =>
          serveUnary(gate, fn, impl, callOf(req, ctx));
      }
      for (const method of streamingMethods(desc)) {
        const fn = streamHandlerOf(binding, method);
        if (!fn) continue;
        const gate = gateOf(desc, method, allow, requestCheck, log);
        // biome-ignore lint/suspicious/noExplicitAny: same shape as the handler it wraps
        (wrapped as Record<string, any>)[method.localName] = (req: unknown, ctx: HandlerContext) =>
          serveStream(gate, fn, impl, callOf(req, ctx));
      }
      router.service(desc, wrapped);
    }
  };
  const server = http2.createSecureServer(
    { ca: tls.ca, cert: tls.cert, key: tls.key, requestCert: true, rejectUnauthorized: true },
    (await connectNode()).connectNodeAdapter({
      routes,
      grpc: true,
      grpcWeb: false,
      connect: true,
      contextValues: (req) => {
        // An HTTP/2 request's socket is a proxy of the TLS socket, which `in` does not see through.
        const socket = req.socket as Partial<TLSSocket>;
        const cert =
          typeof socket.getPeerCertificate === "function" ? socket.getPeerCertificate() : undefined;
        return createContextValues().set(callerKey, identityOf(cert));
      },
    }),
  );
  await new Promise<void>((resolve) => server.listen(port, "0.0.0.0", resolve));
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : port,
    close: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
