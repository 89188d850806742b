import { z } from "zod";
import { idempotencyOf } from "../idempotency.ts";
import { fromJson } from "../json-result.ts";
import { route } from "../route.ts";
import { idParam, pageQuery } from "../schemas.ts";

const cycle = z.string({ error: "must be a string" }).min(1, { error: "is required" });
const configOptions = z
  .object({ os_image_id: z.string({ error: "must be a string" }).optional() })
  .catchall(z.unknown())
  .optional();
const item = z.object({
  productId: idParam,
  billingCycle: cycle,
  hostname: z
    .string({ error: "must be a string" })
    .regex(/^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/, { error: "must be a valid hostname" })
    .optional(),
  configOptions,
});

const orderBody = z.union(
  [
    item.strict(),
    z
      .object({
        items: z
          .array(item, { error: "must be an array" })
          .min(1)
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
    body: orderBody,
    successStatus: 201,
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
    handler: async ({ clients, caller, params }) => ({
      data: fromJson((await clients.billing.getOrder({ caller, orderId: params.id })).result),
    }),
  }),
];
