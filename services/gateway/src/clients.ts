import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { ComputeService } from "@hb/contracts/hb/compute/v1/compute_pb";
import { WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { rpcClient } from "@hb/platform";
import type { GatewayConfig } from "./config.ts";

/**
 * One client per upstream service. Each service adds its own line here when its contract lands.
 */
export function createClients(cfg: GatewayConfig) {
  const opts = { timeoutMs: cfg.RPC_TIMEOUT_MS };
  const handles = {
    auth: rpcClient(cfg.RPC_TRANSPORT, AuthService, cfg.AUTH_ADDR, opts),
    billing: rpcClient(cfg.RPC_TRANSPORT, BillingService, cfg.BILLING_ADDR, opts),
    compute: rpcClient(cfg.RPC_TRANSPORT, ComputeService, cfg.COMPUTE_ADDR, opts),
    webhooks: rpcClient(cfg.RPC_TRANSPORT, WebhooksService, cfg.WEBHOOKS_ADDR, opts),
  };
  return {
    auth: handles.auth.client,
    billing: handles.billing.client,
    compute: handles.compute.client,
    webhooks: handles.webhooks.client,
    close: () => {
      for (const h of Object.values(handles)) h.close();
    },
  };
}

export type Clients = ReturnType<typeof createClients>;
