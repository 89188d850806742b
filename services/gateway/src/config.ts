import { commonConfig, loadConfig } from "@hb/platform";
import { z } from "zod";

const gatewayConfigShape = {
  ...commonConfig,
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default("0.0.0.0"),
  /** Public base URL used in links and docs. */
  PUBLIC_URL: z.string().url().default("http://localhost:8080"),
  /**
   * Proxies whose X-Forwarded-For is believed (Express "trust proxy" syntax: addresses, CIDRs or
   * names such as loopback). Empty: the socket address is the source, so a client cannot spoof
   * its way into an allowlist.
   */
  TRUSTED_PROXIES: z.string().default(""),
  BODY_LIMIT: z.string().default("1mb"),
  /** A client must send a request's headers within this time, and the whole request within the next. */
  HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  /** Idle keep-alive connections are closed after this; above a load balancer's own (60 s). */
  KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).default(65_000),
  /** Open client connections at once (event streams included); further ones are closed at once. */
  MAX_CONNECTIONS: z.coerce.number().int().min(1).default(10_000),
  /**
   * Check keys from the key table auth streams (key-sync.ts) instead of calling auth.Verify for
   * every request. Off: every keyed request asks auth, as before the table existed.
   */
  KEY_TABLE: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true"),
  /**
   * Keys per message of the key table's snapshot: a large table comes in several messages, each
   * well under gRPC's message size limit (5,000 keys are 0.9–1.6 MB).
   */
  /**
   * Characters of machine-list pages this gateway holds (held-pages.ts): a page compute says is
   * unchanged is answered from here. A 50-VPS page is about 32,000. 0: none held, each page read.
   */
  MACHINE_PAGE_HOLD_CHARS: z.coerce
    .number()
    .int()
    .min(0)
    .default(4 * 1024 * 1024),
  KEY_SNAPSHOT_CHUNK: z.coerce.number().int().min(1).max(20_000).default(5000),
  /**
   * The admin pages' certificate and key (identity `admin-panel`, same CA as TLS_CA):
   * the pages call staff and sign-in RPCs the customer API's identity may not.
   */
  ADMIN_PANEL_TLS_CERT: z.string().min(1, "the admin panel's certificate's path is required"),
  ADMIN_PANEL_TLS_KEY: z.string().min(1, "the admin panel's private key's path is required"),
  /**
   * The client portal pages' certificate and key (identity `portal`, same CA as TLS_CA): apart
   * from the admin panel's, so staff definitions refuse a customer page's call.
   */
  PORTAL_TLS_CERT: z.string().min(1, "the portal's certificate's path is required"),
  PORTAL_TLS_KEY: z.string().min(1, "the portal's private key's path is required"),
  /** Heartbeat comments on the webhook event stream, so proxies keep an idle stream open. */
  STREAM_HEARTBEAT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
  /** How long a web console ticket (POST /vps/{id}/console) may wait to be used. */
  CONSOLE_TICKET_TTL_S: z.coerce.number().int().min(5).max(600).default(60),
  /** How often an open portal console checks that its person is still signed in (and may use it). */
  CONSOLE_SESSION_CHECK_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  /**
   * Failed authentication per source address (auth-throttle.ts): this many failures in the window
   * are answered at once; each further one waits, from the base delay doubling up to the maximum.
   */
  AUTH_FAILURES_FREE: z.coerce.number().int().min(1).default(20),
  AUTH_FAILURE_WINDOW_S: z.coerce.number().int().min(1).max(86_400).default(900),
  AUTH_FAILURE_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(500),
  AUTH_FAILURE_MAX_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(5_000),
};

export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;
export const loadGatewayConfig = () => loadConfig(gatewayConfigShape);
