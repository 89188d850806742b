/**
 * The one transport module. Handlers are written once in Connect's ServiceImpl shape with
 * protobuf-es types; this file serves and calls them over plain gRPC with @grpc/grpc-js (the
 * cheaper transport on the hot path, see docs/benchmarks.md) or with connect-node. Both speak the
 * gRPC protocol on the wire, so any gRPC client, probe or tool works against either. Either way a
 * request is checked against the rules its contract declares (request-rules.ts) before its handler.
 */
import http2 from "node:http2";
import { create, type DescMethodUnary, type DescService, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  type Client,
  Code,
  ConnectError,
  type ConnectRouter,
  createClient,
  createHandlerContext,
  type HandlerContext,
  type ServiceImpl,
} from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { Health, HealthCheckResponse_ServingStatus } from "@hb/contracts/grpc/health/v1/health_pb";
import { ErrorInfoSchema } from "@hb/contracts/hb/platform/v1/error_pb";
import { apiError } from "./errors.ts";
import type { Logger } from "./log.ts";
import { requestCheck } from "./request-rules.ts";
import { isDependencyUnavailable } from "./unavailable.ts";

export type Transport = "grpc-js" | "connect";
const errorInfoKey = "hb-error-bin";

// biome-ignore lint/suspicious/noExplicitAny: a registry of heterogeneous services; each pair is typed where it is built
export type ServiceBinding = { desc: DescService; impl: Partial<ServiceImpl<any>> };
export const bind = <S extends DescService>(desc: S, impl: Partial<ServiceImpl<S>>): ServiceBinding => ({
  desc,
  impl,
});

export interface RpcServer {
  port: number;
  /** Stops accepting, lets in-flight calls finish (up to graceMs), then closes. */
  close(graceMs?: number): Promise<void>;
}

type UnaryFn = (req: unknown, ctx: HandlerContext) => unknown;
const handlerOf = (b: ServiceBinding, m: DescMethodUnary) => b.impl[m.localName] as UnaryFn | undefined;

function unaryMethods(desc: DescService): DescMethodUnary[] {
  return desc.methods.filter((m): m is DescMethodUnary => m.methodKind === "unary");
}

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
  return new ConnectError("internal error", Code.Internal);
}

export async function serveRpc(
  transport: Transport,
  port: number,
  bindings: ServiceBinding[],
  log: Logger,
): Promise<RpcServer> {
  const all = [healthBinding, ...bindings];
  return transport === "grpc-js" ? serveGrpcJs(port, all, log) : serveConnect(port, all, log);
}

const emptyHeaders = new Headers();

async function serveGrpcJs(port: number, bindings: ServiceBinding[], log: Logger): Promise<RpcServer> {
  const server = new grpc.Server({ "grpc.max_receive_message_length": 8 * 1024 * 1024 });
  for (const binding of bindings) {
    const { desc, impl } = binding;
    const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
    const handlers: grpc.UntypedServiceImplementation = {};
    for (const method of unaryMethods(desc)) {
      const fn = handlerOf(binding, method);
      if (!fn) continue;
      const path = `/${desc.typeName}/${method.name}`;
      const check = requestCheck(method.input);
      definition[method.localName] = {
        path,
        requestStream: false,
        responseStream: false,
        requestSerialize: (v) => Buffer.from(toBinary(method.input, v as never)),
        requestDeserialize: (b: Buffer) => fromBinary(method.input, b),
        responseSerialize: (v) => Buffer.from(toBinary(method.output, v as never)),
        responseDeserialize: (b: Buffer) => fromBinary(method.output, b),
      };
      handlers[method.localName] = (
        call: grpc.ServerUnaryCall<unknown, unknown>,
        callback: grpc.sendUnaryData<unknown>,
      ) => {
        // The deadline is enforced by grpc-js itself; the context carries no timer and is never
        // aborted, because aborting builds a DOMException per call (measured: ~10% of auth's CPU).
        const ctx = createHandlerContext({
          service: desc,
          method,
          protocolName: "grpc",
          requestMethod: "POST",
          url: path,
          requestHeader: emptyHeaders,
        });
        Promise.resolve()
          .then(() => {
            check?.(call.request as never);
            return fn.call(impl, call.request, ctx);
          })
          .then(
            (res) => callback(null, create(method.output, res as never)),
            (err: unknown) => {
              const ce = toConnectError(err, log, path);
              const md = new grpc.Metadata();
              const info = ce.findDetails(ErrorInfoSchema)[0];
              if (info) md.set(errorInfoKey, Buffer.from(toBinary(ErrorInfoSchema, info)));
              callback({ code: ce.code as number, details: ce.rawMessage, metadata: md });
            },
          );
      };
    }
    server.addService(definition, handlers);
  }
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`0.0.0.0:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    port: bound,
    close: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
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

async function serveConnect(port: number, bindings: ServiceBinding[], log: Logger): Promise<RpcServer> {
  const routes = (router: ConnectRouter) => {
    for (const binding of bindings) {
      const { desc, impl } = binding;
      const wrapped: Partial<ServiceImpl<DescService>> = {};
      for (const method of unaryMethods(desc)) {
        const fn = handlerOf(binding, method);
        if (!fn) continue;
        const check = requestCheck(method.input);
        // biome-ignore lint/suspicious/noExplicitAny: same shape as the handler it wraps
        (wrapped as Record<string, any>)[method.localName] = async (req: unknown, ctx: HandlerContext) => {
          try {
            check?.(req as never);
            return await fn.call(impl, req, ctx);
          } catch (err) {
            throw toConnectError(err, log, `/${desc.typeName}/${method.name}`);
          }
        };
      }
      router.service(desc, wrapped);
    }
  };
  const server = http2.createServer(
    connectNodeAdapter({ routes, grpc: true, grpcWeb: false, connect: true }),
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

export interface ClientOptions {
  timeoutMs: number;
}

export interface ClientHandle<S extends DescService> {
  client: Client<S>;
  close(): void;
}

/** A typed client for one service. Every call carries a deadline. */
export function rpcClient<S extends DescService>(
  transport: Transport,
  desc: S,
  address: string,
  opts: ClientOptions,
): ClientHandle<S> {
  return transport === "grpc-js" ? grpcJsClient(desc, address, opts) : connectClient(desc, address, opts);
}

function connectClient<S extends DescService>(
  desc: S,
  address: string,
  opts: ClientOptions,
): ClientHandle<S> {
  const transport = createGrpcTransport({
    baseUrl: `http://${address}`,
    defaultTimeoutMs: opts.timeoutMs,
  });
  return { client: createClient(desc, transport), close: () => {} };
}

function grpcJsClient<S extends DescService>(desc: S, address: string, opts: ClientOptions): ClientHandle<S> {
  const channel = new grpc.Client(address, grpc.credentials.createInsecure(), {
    "grpc.keepalive_time_ms": 30_000,
    // Calls are retried by the callers that may retry them; grpc-js's own retry machinery costs
    // CPU on every call (measured in docs/benchmarks.md).
    "grpc.enable_retries": 0,
    "grpc.max_receive_message_length": 16 * 1024 * 1024,
  });
  const client: Record<string, unknown> = {};
  for (const method of unaryMethods(desc)) {
    const path = `/${desc.typeName}/${method.name}`;
    const serialize = (v: never) => Buffer.from(toBinary(method.input, v));
    const deserialize = (b: Buffer) => fromBinary(method.output, b);
    client[method.localName] = (req: unknown, callOpts?: { timeoutMs?: number }) =>
      new Promise((resolve, reject) => {
        const deadline = Date.now() + (callOpts?.timeoutMs ?? opts.timeoutMs);
        channel.makeUnaryRequest(
          path,
          serialize,
          deserialize,
          create(method.input, req as never) as never,
          noMetadata,
          { deadline },
          (err, value) => (err ? reject(fromGrpcError(err)) : resolve(value)),
        );
      });
  }
  return { client: client as Client<S>, close: () => channel.close() };
}

const noMetadata = new grpc.Metadata();

function fromGrpcError(err: grpc.ServiceError): ConnectError {
  const raw = err.metadata?.get(errorInfoKey)[0];
  const details =
    raw instanceof Buffer ? [{ desc: ErrorInfoSchema, value: fromBinary(ErrorInfoSchema, raw) }] : [];
  return new ConnectError(err.details || err.message, err.code as unknown as Code, undefined, details, err);
}
