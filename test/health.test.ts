import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";

// A plain grpc-js client with hand-written (de)serialisers, sharing nothing with the project's
// RPC layer: proof that standard gRPC clients and probes work against every service.
const HealthClient = grpc.makeGenericClientConstructor(
  {
    Check: {
      path: "/grpc.health.v1.Health/Check",
      requestStream: false,
      responseStream: false,
      requestSerialize: () => Buffer.alloc(0), // HealthCheckRequest{service: ""}
      requestDeserialize: (b: Buffer) => b,
      responseSerialize: (v: Buffer) => v,
      // HealthCheckResponse{status = 1}: field 1, varint → 0x08 <status>
      responseDeserialize: (b: Buffer) => (b.length >= 2 && b[0] === 0x08 ? b[1] : 0),
    },
  },
  "Health",
);

describe("grpc.health.v1 on every backend", () => {
  for (const env of ["AUTH_ADDR", "COMPUTE_ADDR", "BILLING_ADDR", "WEBHOOKS_ADDR"]) {
    it(`${env} answers SERVING to a plain @grpc/grpc-js client`, async () => {
      const client = new HealthClient(process.env[env]!, grpc.credentials.createInsecure());
      try {
        const status = await new Promise<number>((resolve, reject) =>
          (
            client as unknown as {
              Check: (req: unknown, opts: object, cb: (e: Error | null, v: number) => void) => void;
            }
          ).Check({}, { deadline: Date.now() + 5000 }, (err, value) => (err ? reject(err) : resolve(value))),
        );
        assert.equal(status, 1, "SERVING");
      } finally {
        client.close();
      }
    });
  }
});
