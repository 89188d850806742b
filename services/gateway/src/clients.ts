import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { AuthStaffService } from "@hb/contracts/hb/auth/v1/auth_staff_pb";
import { KeyDistributionService } from "@hb/contracts/hb/auth/v1/key_distribution_pb";
import { PortalService } from "@hb/contracts/hb/auth/v1/portal_pb";
import { BillingDeskService } from "@hb/contracts/hb/billing/v1/billing_desk_pb";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { ComputeDeskService } from "@hb/contracts/hb/compute/v1/compute_desk_pb";
import { ComputeService } from "@hb/contracts/hb/compute/v1/compute_pb";
import { WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { WebhooksStaffService } from "@hb/contracts/hb/webhooks/v1/webhooks_staff_pb";
import { backendClient, loadTlsIdentity, rpcClient } from "@hb/platform";
import type { GatewayConfig } from "./config.ts";

/**
 * The gateway's upstream clients under two identities. The customer API calls the customer-facing
 * definitions as `gateway`; the portal and admin pages call sign-in, staff and partner definitions
 * as `admin-panel`, a certificate of their own (ADMIN_PANEL_TLS_*), so the allow-list can keep the
 * API's identity away from staff RPCs and the pages' away from billing's and compute's customer and
 * staff definitions: the admin panel reaches those two only through their desk definitions.
 */
export function createClients(cfg: GatewayConfig) {
  const api = { timeoutMs: cfg.RPC_TIMEOUT_MS, tls: loadTlsIdentity(cfg) };
  const panel = {
    timeoutMs: cfg.RPC_TIMEOUT_MS,
    tls: loadTlsIdentity({
      TLS_CA: cfg.TLS_CA,
      TLS_CERT: cfg.ADMIN_PANEL_TLS_CERT,
      TLS_KEY: cfg.ADMIN_PANEL_TLS_KEY,
    }),
  };
  const t = cfg.RPC_TRANSPORT;
  const handles = {
    auth: rpcClient(t, AuthService, cfg.AUTH_ADDR, api),
    billing: rpcClient(t, BillingService, cfg.BILLING_ADDR, api),
    compute: rpcClient(t, ComputeService, cfg.COMPUTE_ADDR, api),
    webhooks: rpcClient(t, WebhooksService, cfg.WEBHOOKS_ADDR, api),
    pageAuth: rpcClient(t, AuthStaffService, cfg.AUTH_ADDR, panel),
    // Sign-in and sessions of the portal and admin pages (auth's PortalService).
    portal: rpcClient(t, PortalService, cfg.AUTH_ADDR, panel),
    pageWebhooks: backendClient(t, [WebhooksService, WebhooksStaffService], cfg.WEBHOOKS_ADDR, panel),
    // The admin panel's customer view, credit adjustment and power actions.
    deskBilling: rpcClient(t, BillingDeskService, cfg.BILLING_ADDR, panel),
    deskCompute: rpcClient(t, ComputeDeskService, cfg.COMPUTE_ADDR, panel),
    // The key table's stream and acknowledgements (key-sync.ts), as the customer API's identity.
    keys: rpcClient(t, KeyDistributionService, cfg.AUTH_ADDR, api),
  };
  return {
    auth: handles.auth.client,
    keys: handles.keys.client,
    billing: handles.billing.client,
    compute: handles.compute.client,
    webhooks: handles.webhooks.client,
    /** The pages' clients, presenting the admin-panel certificate. */
    pages: {
      auth: handles.pageAuth.client,
      portal: handles.portal.client,
      webhooks: handles.pageWebhooks.client,
      billing: handles.deskBilling.client,
      compute: handles.deskCompute.client,
    },
    close: () => {
      for (const h of Object.values(handles)) h.close();
    },
  };
}

export type Clients = ReturnType<typeof createClients>;
export type PageClients = Clients["pages"];
