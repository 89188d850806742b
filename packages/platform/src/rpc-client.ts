/**
 * Typed clients of a service (rpcClient), over grpc-js or connect-node, both speaking gRPC with
 * mutual TLS; every call carries a deadline and the caller's context (rpc-context.ts). The serving
 * side is rpc.ts; what both share is rpc-wire.ts.
 */
import { isIP } from "node:net";
import { create, type DescService, fromBinary, toBinary } from "@bufbuild/protobuf";
import { type Client, type Transport as ConnectTransport, createClient } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import { clientCall, contextInterceptor } from "./rpc-context.ts";
import { connectNode, fromGrpcError, streamingMethods, type Transport, unaryMethods } from "./rpc-wire.ts";
import type { TlsIdentity } from "./service-identity.ts";

export interface ClientOptions {
  timeoutMs: number;
  /** This process's identity: the server checks it, and the server's certificate is checked against its CA. */
  tls: TlsIdentity;
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
  const made = connectNode().then(({ createGrpcTransport }) =>
    createGrpcTransport({
      baseUrl: `https://${address}`,
      defaultTimeoutMs: opts.timeoutMs,
      interceptors: [contextInterceptor],
      nodeOptions: { ca: opts.tls.ca, cert: opts.tls.cert, key: opts.tls.key },
    }),
  );
  // The client is made now and its transport on the first call, once connect-node has loaded.
  const transport: ConnectTransport = {
    unary: (method, signal, timeoutMs, header, input, contextValues) =>
      made.then((t) => t.unary(method, signal, timeoutMs, header, input, contextValues)),
    stream: (method, signal, timeoutMs, header, input, contextValues) =>
      made.then((t) => t.stream(method, signal, timeoutMs, header, input, contextValues)),
  };
  return { client: createClient(desc, transport), close: () => {} };
}

/**
 * grpc-js names the TLS server (SNI) after the address's host, an IP address too, which RFC 6066
 * forbids and Node warns about (DEP0123) in every process that calls 127.0.0.1, as `npm start`'s
 * and the tests' stacks do. A loopback address is reached as `localhost` instead: the name is
 * sent and the server's certificate checked against it (the development certificates carry it).
 * Any other address keeps grpc-js's own behaviour (deployments use DNS names).
 */
function loopbackServerName(address: string): string | undefined {
  const host = address.replace(/:\d+$/, "").replace(/^\[(.*)\]$/, "$1");
  const loopback = (isIP(host) === 4 && host.startsWith("127.")) || host === "::1";
  return loopback ? "localhost" : undefined;
}

/**
 * One set of grpc-js credentials per identity: each holds a TLS context with the CA, certificate
 * and key parsed (about 100 KB of resident memory each, measured), and the gateway makes 19
 * clients under three identities. Keyed by the identity object its caller loaded once.
 */
const credentialsByIdentity = new WeakMap<TlsIdentity, grpc.ChannelCredentials>();
function credentialsOf(tls: TlsIdentity): grpc.ChannelCredentials {
  let credentials = credentialsByIdentity.get(tls);
  if (!credentials) {
    credentials = grpc.credentials.createSsl(tls.ca, tls.key, tls.cert);
    credentialsByIdentity.set(tls, credentials);
  }
  return credentials;
}

function grpcJsClient<S extends DescService>(desc: S, address: string, opts: ClientOptions): ClientHandle<S> {
  const credentials = credentialsOf(opts.tls);
  const serverName = loopbackServerName(address);
  const channel = new grpc.Client(address, credentials, {
    ...(serverName ? { "grpc.ssl_target_name_override": serverName } : {}),
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
        const outgoing = clientCall(path);
        channel.makeUnaryRequest(
          path,
          serialize,
          deserialize,
          create(method.input, req as never) as never,
          outgoing.metadata,
          { deadline },
          (err, value) => {
            outgoing.done(err ? err.message : undefined);
            if (err) reject(fromGrpcError(err));
            else resolve(value);
          },
        );
      });
  }
  for (const method of streamingMethods(desc)) {
    const path = `/${desc.typeName}/${method.name}`;
    const serialize = (v: never) => Buffer.from(toBinary(method.input, v));
    const deserialize = (b: Buffer) => fromBinary(method.output, b);
    // A stream has no deadline unless the caller gives one; the caller's signal cancels it.
    client[method.localName] = async function* (
      req: unknown,
      callOpts?: { timeoutMs?: number; signal?: AbortSignal },
    ) {
      const call = channel.makeServerStreamRequest(
        path,
        serialize,
        deserialize,
        create(method.input, req as never) as never,
        clientCall(path).metadata,
        callOpts?.timeoutMs ? { deadline: Date.now() + callOpts.timeoutMs } : {},
      );
      const cancel = () => call.cancel();
      callOpts?.signal?.addEventListener("abort", cancel, { once: true });
      try {
        for await (const message of call) yield message;
      } catch (err) {
        if (callOpts?.signal?.aborted) return;
        throw fromGrpcError(err as grpc.ServiceError);
      } finally {
        callOpts?.signal?.removeEventListener("abort", cancel);
        call.cancel();
      }
    };
  }
  return { client: client as Client<S>, close: () => channel.close() };
}
