import type { MessageInitShape } from "@bufbuild/protobuf";
import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { AuthStaffService } from "@hb/contracts/hb/auth/v1/auth_staff_pb";
import { KeyDistributionService } from "@hb/contracts/hb/auth/v1/key_distribution_pb";
import { PortalService } from "@hb/contracts/hb/auth/v1/portal_pb";
import { BillingDeskService } from "@hb/contracts/hb/billing/v1/billing_desk_pb";
import {
  BillingService,
  type CreateOrderRequestSchema,
  type CreateOrderResponse,
  type PayDocumentRequestSchema,
  type PayDocumentResponse,
} from "@hb/contracts/hb/billing/v1/billing_pb";
import {
  PaymentEventService,
  TopUpService,
  TopUpStaffService,
} from "@hb/contracts/hb/billing/v1/payments_pb";
import { ComputeDeskService } from "@hb/contracts/hb/compute/v1/compute_desk_pb";
import { ComputeConsoleService } from "@hb/contracts/hb/compute/v1/console_pb";
import { WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { WebhooksStaffService } from "@hb/contracts/hb/webhooks/v1/webhooks_staff_pb";
import { backendClient, coalesce, loadTlsIdentity, rpcClient } from "@hb/platform";
import { ComputeApi } from "./compute-client.ts";
import type { GatewayConfig } from "./config.ts";
import { HeldPages } from "./held-pages.ts";

/** At most this many pays or orders in one PayDocuments or CreateOrders call (their contract allows 256). */
const CALLS_PER_CALL = 64;

/** A billing method's calls sent through its companion (`batch`), and alone to a billing without it. */
function coalesced<Req, Res>(
  batch: Parameters<typeof coalesce<Req, Res>>[0],
  unary: (request: Req) => Promise<Res>,
  name: keyof typeof BillingService.method,
): (request: Req) => Promise<Res> {
  const method = `/${BillingService.typeName}/${BillingService.method[name].name}`;
  return coalesce(batch, { method, maxCalls: CALLS_PER_CALL }, unary);
}

/**
 * The gateway's upstream clients under three identities. The customer API calls the
 * customer-facing definitions as `gateway`; the admin pages call sign-in, staff and desk
 * definitions as `admin-panel` (ADMIN_PANEL_TLS_*); the client portal's pages call sign-in, the
 * definitions acting for a signed-in person and top-ups as `portal` (PORTAL_TLS_*). So the
 * allow-list keeps the API's identity away from staff RPCs, and billing and compute tell a staff
 * page from a customer page: their desk and staff definitions refuse the portal's certificate.
 */
export function createClients(cfg: GatewayConfig) {
  const api = { timeoutMs: cfg.RPC_TIMEOUT_MS, tls: loadTlsIdentity(cfg) };
  const identity = (cert: string, key: string) => ({
    timeoutMs: cfg.RPC_TIMEOUT_MS,
    tls: loadTlsIdentity({ TLS_CA: cfg.TLS_CA, TLS_CERT: cert, TLS_KEY: key }),
  });
  const panel = identity(cfg.ADMIN_PANEL_TLS_CERT, cfg.ADMIN_PANEL_TLS_KEY);
  const portal = identity(cfg.PORTAL_TLS_CERT, cfg.PORTAL_TLS_KEY);
  const t = cfg.RPC_TRANSPORT;
  /** The clients one area's pages call with, under that area's identity. */
  const pageHandles = (as: typeof panel) => ({
    auth: rpcClient(t, AuthStaffService, cfg.AUTH_ADDR, as),
    // Sign-in and sessions of the pages (auth's PortalService).
    portal: rpcClient(t, PortalService, cfg.AUTH_ADDR, as),
    webhooks: backendClient(t, [WebhooksService, WebhooksStaffService], cfg.WEBHOOKS_ADDR, as),
    // The admin panel's customer view, credit adjustment and power actions (refused to the portal).
    billing: rpcClient(t, BillingDeskService, cfg.BILLING_ADDR, as),
    compute: rpcClient(t, ComputeDeskService, cfg.COMPUTE_ADDR, as),
    // Top-ups: the portal's Add credit page and the admin panel's bank transfers.
    topUps: backendClient(t, [TopUpService, TopUpStaffService], cfg.BILLING_ADDR, as),
  });
  const adminPages = pageHandles(panel);
  const portalPages = pageHandles(portal);
  const handles = {
    auth: rpcClient(t, AuthService, cfg.AUTH_ADDR, api),
    billing: rpcClient(t, BillingService, cfg.BILLING_ADDR, api),
    compute: rpcClient(t, ComputeApi, cfg.COMPUTE_ADDR, api),
    // Web consoles (console/socket.ts), relayed for the API's routes and the portal's Console page.
    console: rpcClient(t, ComputeConsoleService, cfg.COMPUTE_ADDR, api),
    webhooks: rpcClient(t, WebhooksService, cfg.WEBHOOKS_ADDR, api),
    // The payment provider's webhook, forwarded by the public endpoint (payment-webhook.ts).
    paymentEvents: rpcClient(t, PaymentEventService, cfg.BILLING_ADDR, api),
    // The key table's stream and acknowledgements (key-sync.ts), as the customer API's identity.
    keys: rpcClient(t, KeyDistributionService, cfg.AUTH_ADDR, api),
  };
  const clientsOf = (h: typeof adminPages) => ({
    auth: h.auth.client,
    portal: h.portal.client,
    webhooks: h.webhooks.client,
    billing: h.billing.client,
    compute: h.compute.client,
    topUps: h.topUps.client,
  });
  const billing = handles.billing.client;
  return {
    auth: handles.auth.client,
    keys: handles.keys.client,
    billing: {
      ...billing,
      // The pays and the orders that reach this gateway together go to billing as one call
      // (docs/architecture.md, "Coalesced calls"); each answers as its own unary call would. A
      // billing older than this gateway (a rolling update) is sent the unary calls instead.
      payDocument: coalesced<MessageInitShape<typeof PayDocumentRequestSchema>, PayDocumentResponse>(
        billing.payDocuments,
        billing.payDocument,
        "payDocument",
      ),
      createOrder: coalesced<MessageInitShape<typeof CreateOrderRequestSchema>, CreateOrderResponse>(
        billing.createOrders,
        billing.createOrder,
        "createOrder",
      ),
    },
    compute: handles.compute.client,
    console: handles.console.client,
    webhooks: handles.webhooks.client,
    paymentEvents: handles.paymentEvents.client,
    /** Compute's machine-list pages as this gateway last wrote them, each served only after compute says it stands. */
    machinePages: new HeldPages(cfg.MACHINE_PAGE_HOLD_CHARS),
    /** The admin pages' clients, presenting the admin-panel certificate. */
    pages: clientsOf(adminPages),
    /** The client portal's clients, presenting the portal certificate. */
    portalPages: clientsOf(portalPages),
    close: () => {
      for (const h of [
        ...Object.values(handles),
        ...Object.values(adminPages),
        ...Object.values(portalPages),
      ])
        h.close();
    },
  };
}

export type Clients = ReturnType<typeof createClients>;
export type PageClients = Clients["pages"];
