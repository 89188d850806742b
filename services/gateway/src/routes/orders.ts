import { holdsAny } from "@hb/platform";
import { PAGE_SIZE } from "@hb/platform/paging";
import { z } from "zod";
import { cooldowns } from "../cooldowns.ts";
import { idempotencyOf } from "../idempotency.ts";
import { required } from "../mappers/contract.ts";
import { billingCycleWords, orderPaymentStatusWords, orderStatusWords } from "../mappers/enums.ts";
import { listedOrderJson, orderCreationJson, orderDetailJson } from "../mappers/order.ts";
import { productDetailJson, productJson } from "../mappers/product.ts";
import { route } from "../route.ts";
import { hostname, idParam, pageQuery, pagination } from "../schemas.ts";
import { cycle } from "../wire/money.ts";
import {
  orderCreation,
  orderCreationExample,
  orderDetail,
  orderDetailExample,
  orderList,
  orderListExample,
  orderStatus,
  paymentStatus,
} from "../wire/order.ts";
import { productDetail, productDetailExample, productList, productListExample } from "../wire/product.ts";
import { addonChoice, addonChoiceIn } from "./addon-choice.ts";

const billingCycle = z
  .string({ error: "is required" })
  .pipe(z.enum(cycle.options, { error: `must be one of ${cycle.options.join(", ")}` }));
const configOptions = z
  .object({ os_image_id: z.string({ error: "must be a string" }).optional() })
  .catchall(z.unknown())
  .optional();
/** One order line; reseller orders take the same lines. */
export const orderItem = z.object({
  productId: idParam,
  billingCycle,
  hostname: hostname.optional(),
  configOptions,
});

/** An order line as billing takes it. */
export const orderItemIn = (i: z.infer<typeof orderItem>) => ({
  productId: i.productId,
  billingCycle: billingCycleWords.value(i.billingCycle),
  hostname: i.hostname ?? "",
  osImageId: i.configOptions?.os_image_id ?? "",
});

/** Lines one order may hold. */
export const MAX_ORDER_ITEMS = 50;

/**
 * How many of one line an order form asks for (the portal's "How many"), as typed: plain digits
 * within the items array's own bounds, so the page accepts exactly the orders the API does and
 * never rounds or clamps ("1e3", "-1", "abc" and 1000 are refused, not read as 1 or 50).
 */
const quantityRule = `must be a whole number from 1 to ${MAX_ORDER_ITEMS}`;
export const orderQuantity = z
  .string()
  .regex(/^\d{1,9}$/, { error: quantityRule })
  .transform(Number)
  .pipe(z.int().min(1, { error: quantityRule }).max(MAX_ORDER_ITEMS, { error: quantityRule }));

/** Add-ons one order line may carry. */
const MAX_ORDER_ADDONS = 20;

/**
 * A customer's order line: a reseller's, plus the add-ons bought with it (each as
 * POST /services/{id}/options takes one; started when the order is paid).
 */
const customerOrderItem = orderItem.extend({
  addons: z
    .array(addonChoice, { error: "must be an array" })
    .max(MAX_ORDER_ADDONS, { error: `at most ${MAX_ORDER_ADDONS} add-ons per item` })
    .optional(),
});
type CustomerOrderItem = z.infer<typeof customerOrderItem>;

/** A customer's order line as billing takes it; `at` names the line's fields in errors. */
const customerOrderItemIn = (i: CustomerOrderItem, at: string) => ({
  ...orderItemIn(i),
  addons: (i.addons ?? []).map((a, j) => addonChoiceIn(a, `${at}addons.${j}.billingCycle`)),
});

export const orderBody = z.union(
  [
    customerOrderItem.strict(),
    z
      .object({
        items: z
          .array(customerOrderItem, { error: "must be an array" })
          .min(1, { error: "at least one item" })
          .max(MAX_ORDER_ITEMS, { error: `at most ${MAX_ORDER_ITEMS} items per order` }),
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
      data: { products: (await clients.billing.listProducts({ caller })).products.map(productJson) },
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
    handler: async ({ clients, caller, params }) => {
      const { product } = await clients.billing.getProduct({ caller, productId: params.id });
      return { data: productDetailJson(required(product, "product")) };
    },
  }),
  route({
    method: "post",
    path: "/orders",
    tag: "Products and orders",
    summary: "Place an order; settled from credit when the balance covers it (201)",
    description:
      "Body: productId and billingCycle (optional hostname, configOptions.os_image_id, addons), or items (up to 50), each of which may carry its own addons: up to 20 add-ons the product offers (GET /products/{id}), each as POST /services/{id}/options takes one (optionId, billingType, billingCycle, quantity). Each add-on is a line of the order's document at the price buying it would charge, and starts, with its own cycle, when the order is paid. Send an Idempotency-Key header to make a blind retry safe.",
    auth: { scope: "orders", permissions: ["manage_services"] },
    errors: ["NOT_FOUND"],
    body: orderBody,
    successStatus: 201,
    idempotent: true,
    response: orderCreation,
    example: orderCreationExample,
    cooldown: cooldowns.order,
    handler: async ({ clients, caller, body, req }) => {
      const items = "items" in body ? body.items : [body];
      const r = await clients.billing.createOrder({
        caller,
        ...idempotencyOf(req),
        items: items.map((item, i) => customerOrderItemIn(item, "items" in body ? `items.${i}.` : "")),
      });
      return { data: orderCreationJson(required(r.placed, "placed order")) };
    },
  }),
  route({
    method: "get",
    path: "/orders",
    tag: "Products and orders",
    summary: "Orders, newest first (pagination inside data)",
    auth: { scope: "read", permissions: ["view_invoices"] },
    query: pageQuery(PAGE_SIZE.default).extend({
      status: z
        .enum([...orderStatus.options, ...paymentStatus.options])
        .optional()
        .meta({ description: "an order status or a payment status" }),
    }),
    response: orderList,
    example: orderListExample,
    handler: async ({ clients, caller, query }) => {
      const { orders, total } = await clients.billing.listOrders({
        caller,
        status: query.status ? orderStatusWords.value(query.status) : undefined,
        paymentStatus: query.status ? orderPaymentStatusWords.value(query.status) : undefined,
        page: query.page,
        limit: query.limit,
      });
      return {
        data: { orders: orders.map(listedOrderJson), pagination: pagination(query.page, query.limit, total) },
      };
    },
  }),
  route({
    method: "get",
    path: "/orders/:id",
    tag: "Products and orders",
    summary: "Order, status and the services it produced, each with its add-ons",
    description:
      "Each service carries options: its add-ons as GET /services/{id}/options lists them, when the person may view services (View Services); without that permission the field is absent.",
    auth: { scope: "read", permissions: ["view_invoices"] },
    params: z.object({ id: idParam }),
    response: orderDetail,
    example: orderDetailExample,
    handler: async ({ clients, caller, principal, params }) => {
      // Every service's add-ons in one call beside the order's, never one call per service.
      const [{ order, services }, addons] = await Promise.all([
        clients.billing.getOrder({ caller, orderId: params.id }),
        holdsAny(principal.permissions, ["view_services"])
          ? clients.billing.listOrderAddons({ caller, orderId: params.id })
          : undefined,
      ]);
      return { data: orderDetailJson(required(order, "order"), services, addons?.services) };
    },
  }),
];
