import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { identity } from "./support/clients.ts";

// A plain grpc-js client with hand-written (de)serialisers, sharing nothing with the project's
// RPC layer: proof that standard gRPC clients and probes work against every service.
const method = (path: string) => ({
  path,
  requestStream: false,
  responseStream: false,
  requestSerialize: () => Buffer.alloc(0), // HealthCheckRequest{service: ""}
  requestDeserialize: (b: Buffer) => b,
  responseSerialize: (v: Buffer) => v,
  // HealthCheckResponse{status = 1}: field 1, varint → 0x08 <status>
  responseDeserialize: (b: Buffer) => (b.length >= 2 && b[0] === 0x08 ? b[1] : 0),
});
const HealthClient = grpc.makeGenericClientConstructor(
  {
    Check: method("/grpc.health.v1.Health/Check"),
    // Any other definition, to show the probe port serves health alone.
    GetSettings: method("/hb.auth.v1.AuthStaffService/GetSettings"),
  },
  "Health",
);
type Call = (
  req: unknown,
  opts: object,
  cb: (e: (Error & { code?: number }) | null, v: number) => void,
) => void;

async function call(addr: string, creds: grpc.ChannelCredentials, name: "Check" | "GetSettings") {
  const client = new HealthClient(addr, creds);
  try {
    return await new Promise<number>((resolve, reject) =>
      (client as unknown as Record<string, Call>)[name]!(
        {},
        { deadline: Date.now() + 10_000 },
        (err, value) => (err ? reject(err) : resolve(value)),
      ),
    );
  } finally {
    client.close();
  }
}

const withCertificate = () => {
  // Any identity of the platform's CA may ask for health: here the admin command's.
  const { ca, key, cert } = identity(process.env, "admin");
  return grpc.credentials.createSsl(ca, key, cert);
};

describe("grpc.health.v1 on every backend", () => {
  for (const service of ["auth", "compute", "billing", "webhooks"]) {
    const addr = process.env[`${service.toUpperCase()}_ADDR`]!;
    const probe = `127.0.0.1:${process.env[`${service.toUpperCase()}_HEALTH_PORT`]}`;

    it(`${service} answers SERVING to a plain @grpc/grpc-js client holding a certificate of the CA`, async () => {
      assert.equal(await call(addr, withCertificate(), "Check"), 1, "SERVING");
    });

    it(`${service} refuses a plaintext client on its RPC port`, async () => {
      await assert.rejects(
        call(addr, grpc.credentials.createInsecure(), "Check"),
        (err: { code?: number }) => {
          assert.equal(err.code, grpc.status.UNAVAILABLE);
          return true;
        },
      );
    });

    it(`${service} answers SERVING in plaintext on its probe port, which serves nothing else`, async () => {
      assert.equal(await call(probe, grpc.credentials.createInsecure(), "Check"), 1, "SERVING");
      await assert.rejects(
        call(probe, grpc.credentials.createInsecure(), "GetSettings"),
        (err: { code?: number }) => {
          assert.equal(err.code, grpc.status.UNIMPLEMENTED);
          return true;
        },
      );
    });
  }
});
