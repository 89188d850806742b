import type { Permission } from "@hb/platform";
import { z } from "zod";
import { cooldowns } from "../cooldowns.ts";
import { idempotencyOf } from "../idempotency.ts";
import { required } from "../mappers/contract.ts";
import { orderPaymentModeWords } from "../mappers/enums.ts";
import {
  resellerOrderCreationJson,
  resellerOrderJson,
  resellerPaymentRetryJson,
} from "../mappers/reseller-order.ts";
import { resellerServiceJson, resellerServiceStateJson } from "../mappers/reseller-service.ts";
import { serviceActions } from "../mappers/service.ts";
import { route } from "../route.ts";
import { idParam } from "../schemas.ts";
import * as wire from "../wire/reseller.ts";
import { ORDER_PAYMENT_MODE_WORDS } from "../wire/words.ts";
import { orderItem, orderItemIn } from "./orders.ts";

/**
 * Reseller routes: a reseller key with the account scope, a signed request, and the person's live
 * permissions as the customer routes ask them (placing orders and changing services need Manage
 * Services, termination Cancel Services, retrying a payment Pay Invoices, reading View Services).
 */
const reseller = (write: boolean, permission: Permission) => ({
  scope: "account" as const,
  signed: true,
  write,
  permissions: [permission],
});

export const resellerRoutes = [
  route({
    method: "put",
    path: "/reseller/account/webhook",
    tag: "Reseller",
    summary: "Set the webhook endpoint (explicit http or https scheme, public host); empty clears it",
    auth: reseller(true, "manage_services"),
    response: wire.webhookSetting,
    responseExtra: { message: z.string() },
    exampleExtra: { message: "Webhook URL saved" },
    example: { webhookUrl: "https://shop.example.com/hooks/hosting" },
    body: z.object({ webhookUrl: z.string({ error: "must be a string" }).max(2000) }).strict(),
    fieldNames: { url: "webhookUrl" },
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
    auth: reseller(true, "manage_services"),
    errors: ["CONFLICT"],
    response: wire.webhookTest,
    responseExtra: { message: z.string() },
    exampleExtra: { message: "Test event queued" },
    example: { deliveryId: "0195e3a4-5c6d-7e7f-8a9b-0c1d2e3f4a5b", event: "webhook.test", status: "pending" },
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
    auth: reseller(false, "view_services"),
    query: z.object({ externalOrderId: z.string().max(200).optional() }),
    response: wire.resellerOrderList,
    example: wire.resellerOrderListExample,
    handler: async ({ clients, caller, query }) => {
      const { orders } = await clients.billing.listResellerOrders({
        caller,
        externalOrderId: query.externalOrderId ?? "",
      });
      return { data: { orders: orders.map(resellerOrderJson) } };
    },
  }),
  route({
    method: "get",
    path: "/reseller/orders/:orderId",
    tag: "Reseller",
    summary:
      "Payment status, provisioning status, failure reason, and the order's services (status, hostname, address)",
    auth: reseller(false, "view_services"),
    params: z.object({ orderId: idParam }),
    response: wire.resellerOrder,
    example: wire.resellerOrderExample,
    handler: async ({ clients, caller, params }) => {
      const { order } = await clients.billing.getResellerOrder({ caller, orderId: params.orderId });
      return { data: resellerOrderJson(required(order, "order")) };
    },
  }),
  route({
    method: "get",
    path: "/reseller/services",
    tag: "Reseller",
    summary: "Current state of everything the partner holds",
    auth: reseller(false, "view_services"),
    response: wire.resellerServiceList,
    example: wire.resellerServiceListExample,
    handler: async ({ clients, caller }) => ({
      data: {
        services: (await clients.billing.listResellerServices({ caller })).services.map(resellerServiceJson),
      },
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
    auth: reseller(true, "manage_services"),
    errors: ["CONFLICT", "NOT_FOUND"],
    idempotent: true,
    fieldNames: { external_order_id: "externalOrderId", payment_mode: "paymentMode" },
    response: wire.resellerOrderCreation,
    example: wire.resellerOrderCreationExample,
    body: z.object({
      externalOrderId: z.string({ error: "is required" }).min(1).max(200),
      externalCustomerId: z.string().max(200).default(""),
      paymentMode: z
        .enum(ORDER_PAYMENT_MODE_WORDS, { error: `must be ${ORDER_PAYMENT_MODE_WORDS.join(" or ")}` })
        .default("credit"),
      items: z
        .array(orderItem, { error: "must be an array" })
        .min(1, { error: "at least one item" })
        .max(50, { error: "at most 50 items per order" }),
    }),
    successStatus: 201,
    cooldown: cooldowns.order,
    handler: async ({ clients, caller, body, req }) => {
      const { placed } = await clients.billing.createResellerOrder({
        caller,
        externalOrderId: body.externalOrderId,
        externalCustomerId: body.externalCustomerId,
        paymentMode: orderPaymentModeWords.value(body.paymentMode),
        items: body.items.map(orderItemIn),
        ...idempotencyOf(req),
      });
      return { data: resellerOrderCreationJson(required(placed, "placed order")) };
    },
  }),
  route({
    method: "post",
    path: "/reseller/orders/:orderId/retry-payment",
    tag: "Reseller",
    summary: "Retry charging an unpaid order from the partner's credit",
    description:
      "Moves money as paying a document does, so it takes an Idempotency-Key the same way: a repeat with the key returns the first attempt's answer (paid, or failed for want of credit) and charges nothing; without one, a repeat after a payment is 409 CONFLICT. To try again after adding credit, send a new key.",
    auth: reseller(true, "pay_invoices"),
    errors: ["CONFLICT"],
    params: z.object({ orderId: idParam }),
    idempotent: true,
    response: wire.resellerPaymentRetry,
    example: wire.resellerPaymentRetryExample,
    handler: async ({ clients, caller, params, req }) => ({
      data: resellerPaymentRetryJson(
        await clients.billing.retryResellerPayment({
          caller,
          orderId: params.orderId,
          ...idempotencyOf(req),
        }),
      ),
    }),
  }),
  ...(["suspend", "unsuspend", "terminate"] as const).map((action) =>
    route({
      method: "post",
      path: `/reseller/services/:serviceId/${action}`,
      tag: "Reseller",
      summary: `${action[0].toUpperCase()}${action.slice(1)} a service (body: optional reason)`,
      auth: reseller(true, action === "terminate" ? "cancel_services" : "manage_services"),
      errors: ["CONFLICT"],
      params: z.object({ serviceId: idParam }),
      response: wire.resellerServiceState,
      example: {
        ...wire.resellerServiceStateExample,
        status: { suspend: "suspended", unsuspend: "active", terminate: "terminated" }[action],
      },
      body: z.object({ reason: z.string().max(500).default("") }),
      handler: async ({ clients, caller, params, body }) => ({
        data: resellerServiceStateJson(
          (
            await clients.billing.resellerSetServiceState({
              caller,
              serviceId: params.serviceId,
              action: serviceActions.value(action) ?? 0,
              reason: body.reason,
            })
          ).service!,
        ),
      }),
    }),
  ),
];
