/**
 * What mutual TLS and the per-call identity check cost on the hot path's shape (the gateway calling
 * auth's Verify): one long-lived channel, a Verify handler that answers at once, `concurrency`
 * calls in flight for `seconds`. Prints calls/s and the server's and client's CPU per call.
 * `node scripts/bench/rpc-identity.ts [platformSrcDir]`: the directory lets the same script
 * measure an older checkout's rpc.ts (which ignores the tls arguments) for the before/after.
 */
import path from "node:path";
import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { loadTlsIdentity } from "../../packages/platform/src/service-identity.ts";
import { certFiles, ensureDevCerts } from "../dev-certs.ts";

const src = process.argv[2] ?? path.resolve(import.meta.dirname, "../../packages/platform/src");
const platform = await import(path.join(src, "index.ts"));
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 50);

const dir = await ensureDevCerts();
const log = platform.createLogger("bench", "error");
const server = await platform.serveRpc(
  "grpc-js",
  0,
  [platform.bind(AuthService, { verify: () => ({}) })],
  log,
  loadTlsIdentity(certFiles(dir, "auth")),
);
const handle = platform.rpcClient("grpc-js", AuthService, `127.0.0.1:${server.port}`, {
  timeoutMs: 5000,
  tls: loadTlsIdentity(certFiles(dir, "gateway")),
});
const verify = (handle.client as { verify(r: object): Promise<unknown> }).verify;
await verify({ key: "" }); // the handshake, outside the measurement

let calls = 0;
const until = Date.now() + seconds * 1000;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (Date.now() < until) {
      await verify({ key: "" });
      calls++;
    }
  }),
);
const elapsed = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
console.log(
  JSON.stringify({
    src,
    callsPerSecond: Math.round(calls / elapsed),
    // Server and client share this process: the CPU is both sides of a call.
    cpuMicrosPerCall: Math.round((cpu.user + cpu.system) / calls),
  }),
);
handle.close();
await server.close(100);
