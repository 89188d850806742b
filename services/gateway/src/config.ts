import { commonConfig, loadConfig } from "@hb/platform";
import { z } from "zod";

export const gatewayConfigShape = {
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
  /** Heartbeat comments on the webhook event stream, so proxies keep an idle stream open. */
  STREAM_HEARTBEAT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
};

export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;
export const loadGatewayConfig = () => loadConfig(gatewayConfigShape);
