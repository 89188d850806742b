import type { DescService } from "@bufbuild/protobuf";
// By path, not the barrel: every test file loads this, and the barrel brings PostgreSQL, NATS and
// tracing with it (0.1 s of CPU per process).
import { backendClient } from "@hb/platform/backend-client";
import { loadTlsIdentity, type ServiceIdentity } from "@hb/platform/service-identity";
import { certFiles } from "../../scripts/cert-files.ts";

/**
 * A client a test holds for one backend of a stack, over the service definitions it calls
 * (`[AuthService, AuthStaffService]`), the address read from the stack's environment. It presents
 * the certificate of `as`: tests set state up as the admin surface does, and call customer-facing
 * RPCs directly as the gateway would.
 */
export function stackClient<const D extends readonly DescService[]>(
  env: Record<string, string | undefined>,
  descs: D,
  addrEnv: string,
  timeoutMs = 10_000,
  as: ServiceIdentity = "admin",
) {
  const addr = env[addrEnv];
  if (!addr) throw new Error(`${addrEnv} is not set: run the tests through npm test`);
  return backendClient("grpc-js", descs, addr, { timeoutMs, tls: identity(env, as) });
}

/** The certificate and key the stack's launcher issued to `as`. */
export function identity(env: Record<string, string | undefined>, as: string) {
  if (!env.HB_CERTS_DIR) throw new Error("HB_CERTS_DIR is not set: run the tests through npm test");
  return loadTlsIdentity(certFiles(env.HB_CERTS_DIR, as));
}

/**
 * The environment a hand-started gateway replica needs for its certificates, as the launcher
 * gives them: its own (`gateway`) and the ones its pages call with (`admin-panel`, `portal`).
 */
export function gatewayCertEnv(dir = process.env.HB_CERTS_DIR): Record<string, string> {
  if (!dir) throw new Error("HB_CERTS_DIR is not set: run the tests through npm test");
  const panel = certFiles(dir, "admin-panel");
  const portal = certFiles(dir, "portal");
  return {
    ...certFiles(dir, "gateway"),
    ADMIN_PANEL_TLS_CERT: panel.TLS_CERT,
    ADMIN_PANEL_TLS_KEY: panel.TLS_KEY,
    PORTAL_TLS_CERT: portal.TLS_CERT,
    PORTAL_TLS_KEY: portal.TLS_KEY,
  };
}
