import { z } from "zod";
import { idempotencyOf } from "../idempotency.ts";
import { fromJson } from "../json-result.ts";
import { route } from "../route.ts";
import { hostname, idParam, pageQuery } from "../schemas.ts";
import {
  orderCreation,
  orderCreationExample,
  orderDetail,
  orderDetailExample,
  orderList,
  orderListExample,
} from "../wire/order.ts";
import { productDetail, productDetailExample, productList, productListExample } from "../wire/product.ts";

const cycle = z.string({ error: "must be a string" }).min(1, { error: "is required" });
const configOptions = z
  .object({ os_image_id: z.string({ error: "must be a string" }).optional() })
  .catchall(z.unknown())
  .optional();
/** One order line; reseller orders take the same lines. */
export const orderItem = z.object({
  productId: idParam,
  billingCycle: cycle,
  hostname: hostname.optional(),
  configOptions,
});

const orderBody = z.union(
  [
    orderItem.strict(),
    z
      .object({
        items: z
          .array(orderItem, { error: "must be an array" })
          .min(1, { error: "at least one item" })
          .max(50, { error: "at most 50 items per order" }),
      })
      .strict(),
  ],
  { error: "send productId and billingCycle, or items (up to 50)" },
);

export const orderRoutes = [
  route({
    method: "get",
    path: "/products",
    tag: "Products and orders",
    summary: "Orderable catalogue with cycles and prices",
    auth: { scope: "read", permissions: ["view_services"] },
    response: productList,
    example: productListExample,
    handler: async ({ clients, caller }) => ({
      data: fromJson((await clients.billing.listProducts({ caller })).result),
    }),
  }),
  route({
    method: "get",
    path: "/products/:id",
    tag: "Products and orders",
    summary: "Billing cycles, add-on options and OS images an order will accept",
    auth: { scope: "read", permissions: ["view_services"] },
    params: z.object({ id: idParam }),
    response: productDetail,
    example: productDetailExample,
    handler: async ({ clients, caller, params }) => ({
      data: fromJson((await clients.billing.getProduct({ caller, productId: params.id })).result),
    }),
  }),
  route({
    method: "post",
    path: "/orders",
    tag: "Products and orders",
    summary: "Place an order; settled from credit when the balance covers it (201)",
    description:
      "Body: productId and billingCycle (optional hostname, configOptions.os_image_id), or items (up to 50). Send an Idempotency-Key header to make a blind retry safe.",
    auth: { scope: "orders", permissions: ["manage_services"] },
    errors: ["NOT_FOUND"],
    body: orderBody,
    successStatus: 201,
    idempotent: true,
    response: orderCreation,
    example: orderCreationExample,
    cooldown: { rule: { action: "order", limit: 30, windowSeconds: 900 }, resource: () => "all" },
    handler: async ({ clients, caller, body, req }) => {
      const items = "items" in body ? body.items : [body];
      const r = await clients.billing.createOrder({
        caller,
        ...idempotencyOf(req),
        items: items.map((i) => ({
          productId: i.productId,
          billingCycle: i.billingCycle,
          hostname: i.hostname ?? "",
          osImageId: i.configOptions?.os_image_id ?? "",
        })),
      });
      return { data: fromJson(r.result) };
    },
  }),
  route({
    method: "get",
    path: "/orders",
    tag: "Products and orders",
    summary: "Orders, newest first (pagination inside data)",
    auth: { scope: "read", permissions: ["view_invoices"] },
    query: pageQuery(20).extend({ status: z.string().max(40).optional() }),
    response: orderList,
    example: orderListExample,
    handler: async ({ clients, caller, query }) => ({
      data: fromJson(
        (
          await clients.billing.listOrders({
            caller,
            status: query.status ?? "",
            page: query.page,
            limit: query.limit,
          })
        ).result,
      ),
    }),
  }),
  route({
    method: "get",
    path: "/orders/:id",
    tag: "Products and orders",
    summary: "Order, status and the services it produced",
    auth: { scope: "read", permissions: ["view_invoices"] },
    params: z.object({ id: idParam }),
    response: orderDetail,
    example: orderDetailExample,
    handler: async ({ clients, caller, params }) => ({
      data: fromJson((await clients.billing.getOrder({ caller, orderId: params.id })).result),
    }),
  }),
];
