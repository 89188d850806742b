import type { PeerCertificate } from "node:tls";
import { Counter, metricsRegistry } from "./metrics.ts";
import { identityOf } from "./service-identity.ts";

const certificateReads = new Counter({
  name: "rpc_peer_certificate_reads_total",
  help: "Times a caller's TLS certificate was read to name it: once per connection",
  registers: [metricsRegistry],
});

/**
 * The identity of each HTTP/2 session's caller. A session is one TLS connection, whose peer
 * certificate cannot change, so it is read once per connection: reading it on every call
 * (`getPeerCertificate` builds the certificate's object each time) was 6% of billing's CPU on a
 * cheap call. Held weakly: a session's entry goes with the session.
 */
const sessionCallers = new WeakMap<object, string | undefined>();

/** The caller's identity (its certificate's common name) of a grpc-js server call. */
export function callerIdentity(call: {
  getAuthContext(): { sslPeerCertificate?: PeerCertificate };
}): string | undefined {
  const session = http2SessionOf(call);
  if (session && sessionCallers.has(session)) return sessionCallers.get(session);
  certificateReads.inc();
  const identity = identityOf(call.getAuthContext().sslPeerCertificate);
  if (session) sessionCallers.set(session, identity);
  return identity;
}

/**
 * The HTTP/2 session under a grpc-js server call, which grpc-js does not expose: the call object
 * wraps its intercepting call, whose innermost link holds the stream (grpc-js 1.14). Undefined
 * when the shape differs, and the certificate is then read on every call as before; the test of
 * `rpc_peer_certificate_reads_total` fails if that happens after an upgrade.
 */
function http2SessionOf(call: unknown): object | undefined {
  let link = (call as { call?: unknown }).call;
  for (let depth = 0; depth < 8 && typeof link === "object" && link !== null; depth++) {
    const session = (link as { stream?: { session?: unknown } }).stream?.session;
    if (typeof session === "object" && session !== null) return session;
    link = (link as { nextCall?: unknown }).nextCall;
  }
  return undefined;
}
