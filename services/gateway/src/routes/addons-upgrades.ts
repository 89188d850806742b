import { DocumentKind } from "@hb/contracts/hb/billing/v1/documents_pb";
import type { Upgrade } from "@hb/contracts/hb/billing/v1/upgrades_pb";
import { z } from "zod";
import { cooldowns } from "../cooldowns.ts";
import { idempotencyOf } from "../idempotency.ts";
import { addonCancellationJson, addonJson, addonOffersJson, addonPurchaseJson } from "../mappers/addon.ts";
import { required } from "../mappers/contract.ts";
import { invoiceJson } from "../mappers/invoice.ts";
import { orderJson } from "../mappers/order.ts";
import { upgradeDetailJson, upgradeJson, upgradePathsJson } from "../mappers/upgrade.ts";
import { type Context, route } from "../route.ts";
import { idParam } from "../schemas.ts";
import * as addons from "../wire/addon.ts";
import type { invoice } from "../wire/invoice.ts";
import * as upgrades from "../wire/upgrade.ts";
import { addonChoice, addonChoiceIn } from "./addon-choice.ts";

type Invoice = z.infer<typeof invoice>;
type UpgradeOrder = z.infer<typeof upgrades.upgradeDetail>["order"];

const id = z.object({ id: idParam });

type Billing = Pick<Context<unknown, unknown, unknown>, "clients" | "caller">;

/** An invoice billing issued for a purchase, as the invoice record (its line items are the detail's). */
async function invoiceRecord({ clients, caller }: Billing, documentId: string): Promise<Invoice> {
  const { document } = await clients.billing.getDocument({ caller, kind: DocumentKind.INVOICE, documentId });
  return invoiceJson(required(document, "invoice"));
}

/** The invoice an upgrade waits for; null when the change needed none. */
const upgradeInvoice = async (ctx: Billing, u: Upgrade | undefined) =>
  u?.invoiceId ? invoiceRecord(ctx, u.invoiceId) : null;

/** The order an upgrade created, as GET /upgrades/{id} shows it. */
async function upgradeOrder({ clients, caller }: Billing, u: Upgrade | undefined) {
  if (!u?.orderId) return null;
  const { order } = await clients.billing.getOrder({ caller, orderId: u.orderId });
  const { id, order_number, status, payment_status } = orderJson(required(order, "order"));
  return { id, order_number, status, payment_status } satisfies UpgradeOrder;
}

const view = { scope: "read" as const, permissions: ["view_services" as const] };
const orders = { scope: "orders" as const, permissions: ["manage_services" as const] };
// Order creation, add-on purchases and upgrade requests share one window.
export const addonUpgradeRoutes = [
  route({
    method: "get",
    path: "/services/:id/options",
    tag: "Add-ons and upgrades",
    summary: "Active add-ons (cancelled ones disappear)",
    auth: view,
    params: id,
    response: addons.addonList,
    example: addons.addonListExample,
    handler: async ({ clients, caller, params }) => ({
      data: {
        options: (await clients.billing.listAddons({ caller, serviceId: params.id })).addons.map(addonJson),
      },
    }),
  }),
  route({
    method: "get",
    path: "/services/:id/options/available",
    tag: "Add-ons and upgrades",
    summary: "Add-ons the product offers, with prices; held ones marked",
    auth: view,
    params: id,
    response: addons.availableAddonList,
    example: addons.availableAddonListExample,
    handler: async ({ clients, caller, params }) => ({
      data: addonOffersJson((await clients.billing.listAddonOffers({ caller, serviceId: params.id })).offers),
    }),
  }),
  route({
    method: "post",
    path: "/services/:id/options",
    tag: "Add-ons and upgrades",
    summary: "Buy an add-on: charges a full cycle and starts the add-on's own cycle today",
    auth: orders,
    errors: ["CONFLICT"],
    params: id,
    idempotent: true,
    fieldNames: { option_id: "optionId", billing_type: "billingType" },
    response: addons.addonPurchase,
    example: addons.addonPurchaseExample,
    body: addonChoice,
    successStatus: 201,
    cooldown: cooldowns.order,
    handler: async (ctx) => {
      const { clients, caller, params, body, req } = ctx;
      const bought = await clients.billing.buyAddon({
        caller,
        serviceId: params.id,
        ...addonChoiceIn(body),
        ...idempotencyOf(req),
      });
      return { data: addonPurchaseJson(bought, await invoiceRecord(ctx, bought.invoiceId)) };
    },
  }),
  route({
    method: "delete",
    path: "/services/:id/options/:optionId",
    tag: "Add-ons and upgrades",
    summary: "Cancel an add-on immediately (optionId is the catalogue option id)",
    auth: { scope: "destructive", permissions: ["cancel_services"] },
    params: z.object({ id: idParam, optionId: idParam }),
    response: addons.addonCancellation,
    responseExtra: { message: z.string() },
    exampleExtra: { message: "Add-on cancelled" },
    example: addons.addonCancellationExample,
    handler: async ({ clients, caller, params }) => ({
      data: addonCancellationJson(
        await clients.billing.cancelAddon({ caller, serviceId: params.id, optionId: params.optionId }),
      ),
      extra: { message: "Add-on cancelled" },
    }),
  }),
  route({
    method: "get",
    path: "/services/:id/upgrades",
    tag: "Add-ons and upgrades",
    summary: "Upgrade paths with a prorated quote (held until quote_expires_at), plus any pending upgrade",
    auth: view,
    params: id,
    response: upgrades.upgradePaths,
    example: upgrades.upgradePathsExample,
    handler: async (ctx) => {
      const paths = await ctx.clients.billing.listUpgradePaths({
        caller: ctx.caller,
        serviceId: ctx.params.id,
      });
      return { data: upgradePathsJson(paths, await upgradeInvoice(ctx, paths.pendingUpgrade)) };
    },
  }),
  route({
    method: "post",
    path: "/services/:id/upgrades",
    tag: "Add-ons and upgrades",
    summary: "Request an upgrade to another product (prorated; credit is never applied automatically)",
    auth: orders,
    errors: ["CONFLICT"],
    params: id,
    idempotent: true,
    fieldNames: { to_product_id: "toProductId" },
    response: upgrades.upgrade,
    example: upgrades.upgradeExample,
    body: z.object({ toProductId: idParam }),
    successStatus: 201,
    cooldown: cooldowns.order,
    handler: async (ctx) => {
      const { upgrade } = await ctx.clients.billing.requestUpgrade({
        caller: ctx.caller,
        serviceId: ctx.params.id,
        toProductId: ctx.body.toProductId,
        ...idempotencyOf(ctx.req),
      });
      return { data: upgradeJson(upgrade!, await upgradeInvoice(ctx, upgrade)) };
    },
  }),
  route({
    method: "post",
    path: "/services/:id/upgrades/options",
    tag: "Add-ons and upgrades",
    summary: "Add and remove options (lists must not overlap); prorated, aligned to the next due date",
    auth: orders,
    errors: ["CONFLICT"],
    params: id,
    idempotent: true,
    response: upgrades.upgrade,
    example: {
      ...upgrades.upgradeExample,
      type: "options",
      to_product_id: null,
      add_options: [addons.addonExample.option_id],
    },
    body: z
      .object({
        addOptions: z.array(idParam).max(50).default([]),
        removeOptions: z.array(idParam).max(50).default([]),
      })
      .refine((b) => !b.addOptions.some((o) => b.removeOptions.includes(o)), {
        message: "addOptions and removeOptions must not overlap",
        path: ["removeOptions"],
      }),
    successStatus: 201,
    cooldown: cooldowns.order,
    handler: async (ctx) => {
      const { upgrade } = await ctx.clients.billing.requestUpgrade({
        caller: ctx.caller,
        serviceId: ctx.params.id,
        addOptions: ctx.body.addOptions,
        removeOptions: ctx.body.removeOptions,
        ...idempotencyOf(ctx.req),
      });
      return { data: upgradeJson(upgrade!, await upgradeInvoice(ctx, upgrade)) };
    },
  }),
  route({
    method: "get",
    path: "/upgrades/:id",
    tag: "Add-ons and upgrades",
    summary: "An upgrade, its billing document and the order it created",
    auth: view,
    params: id,
    response: upgrades.upgradeDetail,
    example: upgrades.upgradeDetailExample,
    handler: async (ctx) => {
      const { upgrade } = await ctx.clients.billing.getUpgrade({
        caller: ctx.caller,
        upgradeId: ctx.params.id,
      });
      const [invoice, order] = await Promise.all([upgradeInvoice(ctx, upgrade), upgradeOrder(ctx, upgrade)]);
      return { data: upgradeDetailJson(upgrade!, invoice, order) };
    },
  }),
  route({
    method: "post",
    path: "/upgrades/:id/cancel",
    tag: "Add-ons and upgrades",
    summary: "Cancel an upgrade still awaiting payment",
    auth: orders,
    errors: ["CONFLICT"],
    params: id,
    response: upgrades.upgrade,
    responseExtra: { message: z.string() },
    exampleExtra: { message: "Upgrade cancelled" },
    example: {
      ...upgrades.upgradeExample,
      status: "cancelled",
      document: { ...upgrades.upgradeExample.document, status: "cancelled" },
    },
    handler: async (ctx) => {
      const { upgrade } = await ctx.clients.billing.cancelUpgrade({
        caller: ctx.caller,
        upgradeId: ctx.params.id,
      });
      return {
        data: upgradeJson(upgrade!, await upgradeInvoice(ctx, upgrade)),
        extra: { message: "Upgrade cancelled" },
      };
    },
  }),
];
