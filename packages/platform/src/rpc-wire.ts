/**
 * What both ends of a call share (rpc.ts serves, rpc-client.ts calls): the two transports, a
 * service's methods by kind, how grpc-js (de)serialises a method's messages, and how an error's
 * ErrorInfo detail travels in grpc-js metadata and back.
 */
import {
  type DescMethodServerStreaming,
  type DescMethodUnary,
  type DescService,
  fromBinary,
  toBinary,
} from "@bufbuild/protobuf";
import type { Code, ConnectError } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import { ErrorInfoSchema } from "@hb/contracts/hb/platform/v1/error_pb";
import { connectError } from "./connect-error.ts";

/**
 * connect-node, loaded only by a process that uses the Connect transport: grpc-js is the default,
 * and loading both cost every service resident memory it never used (issue 13).
 */
let connectNodeModule: Promise<typeof import("@connectrpc/connect-node")> | undefined;
export const connectNode = () => {
  connectNodeModule ??= import("@connectrpc/connect-node");
  return connectNodeModule;
};

export type Transport = "grpc-js" | "connect";
const errorInfoKey = "hb-error-bin";

/** The unary methods of a service. */
export function unaryMethods(desc: DescService): DescMethodUnary[] {
  return desc.methods.filter((m): m is DescMethodUnary => m.methodKind === "unary");
}

/** Server-streaming methods (a live feed such as the webhooks service's event stream). */
export function streamingMethods(desc: DescService): DescMethodServerStreaming[] {
  return desc.methods.filter((m): m is DescMethodServerStreaming => m.methodKind === "server_streaming");
}

/** A ConnectError as grpc-js sends it: the ErrorInfo detail travels in binary metadata. */
export function grpcStatusOf(ce: ConnectError): Partial<grpc.StatusObject> {
  const md = new grpc.Metadata();
  const info = ce.findDetails(ErrorInfoSchema)[0];
  if (info) md.set(errorInfoKey, Buffer.from(toBinary(ErrorInfoSchema, info)));
  return { code: ce.code as number, details: ce.rawMessage, metadata: md };
}

/** The other end of grpcStatusOf: a grpc-js error back into a ConnectError with its detail. */
export function fromGrpcError(err: grpc.ServiceError): ConnectError {
  const raw = err.metadata?.get(errorInfoKey)[0];
  const details =
    raw instanceof Buffer ? [{ desc: ErrorInfoSchema, value: fromBinary(ErrorInfoSchema, raw) }] : [];
  return connectError(err.details || err.message, err.code as unknown as Code, details, err);
}

/** How grpc-js serves one method: its path and the protobuf-es (de)serialisers of its messages. */
export function grpcMethodDefinition(
  path: string,
  method: DescMethodUnary | DescMethodServerStreaming,
  responseStream: boolean,
): grpc.MethodDefinition<unknown, unknown> {
  return {
    path,
    requestStream: false,
    responseStream,
    requestSerialize: (v) => Buffer.from(toBinary(method.input, v as never)),
    requestDeserialize: (b: Buffer) => fromBinary(method.input, b),
    responseSerialize: (v) => Buffer.from(toBinary(method.output, v as never)),
    responseDeserialize: (b: Buffer) => fromBinary(method.output, b),
  };
}
