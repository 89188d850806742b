/**
 * Who a process is on the internal network: a certificate issued to its service name (the
 * subject's common name) by the platform's CA. Servers present it and ask for the caller's;
 * clients present it and check the server's against the same CA (mutual TLS).
 */
import { readFileSync } from "node:fs";
import type { PeerCertificate } from "node:tls";
import { z } from "zod";

/**
 * Every identity the platform issues a certificate to. `admin` is the admin command; `admin-panel`
 * is the gateway's admin pages (staff) and `portal` its client portal pages (customers): each holds
 * a certificate apart from the customer API's, and apart from each other, so a service can tell a
 * staff page's call from a customer page's.
 */
export const SERVICE_IDENTITIES = [
  "gateway",
  "admin-panel",
  "portal",
  "auth",
  "billing",
  "compute",
  "webhooks",
  "admin",
] as const;
export type ServiceIdentity = (typeof SERVICE_IDENTITIES)[number];

/** The CA that issues every service's certificate, and this process's own certificate and key. */
export interface TlsIdentity {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

/** PEM file paths, one set per process (mounted from a Secret in Kubernetes). */
export const tlsConfig = {
  TLS_CA: z.string().min(1, "the CA certificate's path is required (internal calls are mutual TLS)"),
  TLS_CERT: z.string().min(1, "this service's certificate's path is required"),
  TLS_KEY: z.string().min(1, "this service's private key's path is required"),
};

export function loadTlsIdentity(paths: { TLS_CA: string; TLS_CERT: string; TLS_KEY: string }): TlsIdentity {
  return {
    ca: readFileSync(paths.TLS_CA),
    cert: readFileSync(paths.TLS_CERT),
    key: readFileSync(paths.TLS_KEY),
  };
}

/** The caller's service name from the certificate it presented, or undefined when it presented none. */
export function identityOf(cert: PeerCertificate | undefined | null): string | undefined {
  // An empty object stands for "no certificate" in Node's API.
  const cn = cert?.subject?.CN;
  if (typeof cn === "string") return cn;
  return undefined; // several common names: ambiguous, so no identity at all
}
