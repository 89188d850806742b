import { z } from "zod";
import { idempotencyOf } from "../idempotency.ts";
import { fromJson } from "../json-result.ts";
import { route } from "../route.ts";
import { idParam } from "../schemas.ts";

/** Reseller routes: a reseller key with the account scope, and a signed request. */
const reseller = (write: boolean) => ({ scope: "account" as const, signed: true, write });

const item = z.object({
  productId: idParam,
  billingCycle: z.string({ error: "is required" }).min(1, { error: "is required" }),
  hostname: z.string().max(253).optional(),
  configOptions: z.object({ os_image_id: z.string().optional() }).catchall(z.unknown()).optional(),
});

export const resellerRoutes = [
  route({
    method: "put",
    path: "/reseller/account/webhook",
    tag: "Reseller",
    summary: "Set the webhook endpoint (explicit http or https scheme, public host); empty clears it",
    auth: reseller(true),
    body: z.object({ webhookUrl: z.string({ error: "must be a string" }).max(2000) }).strict(),
    handler: async ({ clients, principal, body }) => {
      const r = await clients.webhooks.setWebhookUrl({
        partnerId: principal.customerId,
        url: body.webhookUrl,
      });
      return {
        data: { webhookUrl: r.url || null },
        extra: { message: r.url ? "Webhook URL saved" : "Webhook URL cleared" },
      };
    },
  }),
  route({
    method: "post",
    path: "/reseller/webhooks/test",
    tag: "Reseller",
    summary: "Queue a webhook.test event to the URL on file",
    auth: reseller(true),
    handler: async ({ clients, principal }) => {
      const r = await clients.webhooks.queueTest({ partnerId: principal.customerId });
      return {
        data: { deliveryId: r.deliveryId, event: "webhook.test", status: "pending" },
        extra: { message: "Test event queued" },
      };
    },
  }),
  route({
    method: "get",
    path: "/reseller/orders",
    tag: "Reseller",
    summary: "Orders; ?externalOrderId finds one by the partner's own identifier",
    auth: reseller(false),
    query: z.object({ externalOrderId: z.string().max(200).optional() }),
    handler: async ({ clients, caller, query }) => ({
      data: fromJson(
        (await clients.billing.listResellerOrders({ caller, externalOrderId: query.externalOrderId ?? "" }))
          .result,
      ),
    }),
  }),
  route({
    method: "get",
    path: "/reseller/orders/:orderId",
    tag: "Reseller",
    summary:
      "Payment status, provisioning status, failure reason, and the order's services (status, hostname, address)",
    auth: reseller(false),
    params: z.object({ orderId: idParam }),
    handler: async ({ clients, caller, params }) => ({
      data: fromJson((await clients.billing.getResellerOrder({ caller, orderId: params.orderId })).result),
    }),
  }),
  route({
    method: "get",
    path: "/reseller/services",
    tag: "Reseller",
    summary: "Current state of everything the partner holds",
    auth: reseller(false),
    handler: async ({ clients, caller }) => ({
      data: fromJson((await clients.billing.listResellerServices({ caller })).result),
    }),
  }),
  route({
    method: "post",
    path: "/reseller/orders",
    tag: "Reseller",
    summary:
      "Place an order for an end customer (externalOrderId, externalCustomerId, paymentMode credit or invoice)",
    description:
      "paymentMode credit charges the partner's credit now (order.paid once provisioned, or order.payment_failed); invoice raises a document (order.invoiced).",
    auth: reseller(true),
    body: z.object({
      externalOrderId: z.string({ error: "is required" }).min(1).max(200),
      externalCustomerId: z.string().max(200).default(""),
      paymentMode: z.enum(["credit", "invoice"], { error: "must be credit or invoice" }).default("credit"),
      items: z.array(item).min(1).max(50, { error: "at most 50 items per order" }),
    }),
    successStatus: 201,
    cooldown: { rule: { action: "order", limit: 30, windowSeconds: 900 }, resource: () => "all" },
    handler: async ({ clients, caller, body, req }) => ({
      data: fromJson(
        (
          await clients.billing.createResellerOrder({
            caller,
            externalOrderId: body.externalOrderId,
            externalCustomerId: body.externalCustomerId,
            paymentMode: body.paymentMode,
            items: body.items.map((i) => ({
              productId: i.productId,
              billingCycle: i.billingCycle,
              hostname: i.hostname ?? "",
              osImageId: i.configOptions?.os_image_id ?? "",
            })),
            ...idempotencyOf(req),
          })
        ).result,
      ),
    }),
  }),
  route({
    method: "post",
    path: "/reseller/orders/:orderId/retry-payment",
    tag: "Reseller",
    summary: "Retry charging an unpaid order from the partner's credit",
    auth: reseller(true),
    params: z.object({ orderId: idParam }),
    handler: async ({ clients, caller, params }) => ({
      data: fromJson(
        (await clients.billing.retryResellerPayment({ caller, orderId: params.orderId })).result,
      ),
    }),
  }),
  ...(["suspend", "unsuspend", "terminate"] as const).map((action) =>
    route({
      method: "post",
      path: `/reseller/services/:serviceId/${action}`,
      tag: "Reseller",
      summary: `${action[0].toUpperCase()}${action.slice(1)} a service (body: optional reason)`,
      auth: reseller(true),
      params: z.object({ serviceId: idParam }),
      body: z.object({ reason: z.string().max(500).default("") }),
      handler: async ({ clients, caller, params, body }) => ({
        data: fromJson(
          (
            await clients.billing.resellerSetServiceState({
              caller,
              serviceId: params.serviceId,
              action,
              reason: body.reason,
            })
          ).result,
        ),
      }),
    }),
  ),
];
