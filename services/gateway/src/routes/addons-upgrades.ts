import { z } from "zod";
import { idempotencyOf } from "../idempotency.ts";
import { fromJson } from "../json-result.ts";
import { route } from "../route.ts";
import { idParam } from "../schemas.ts";
import * as addons from "../wire/addon.ts";
import * as upgrades from "../wire/upgrade.ts";

const id = z.object({ id: idParam });
const view = { scope: "read" as const, permissions: ["view_services" as const] };
const orders = { scope: "orders" as const, permissions: ["manage_services" as const] };
// Order creation, add-on purchases and upgrade requests share one window.
const buying = { rule: { action: "order", limit: 30, windowSeconds: 900 }, resource: () => "all" };

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
      data: fromJson(
        (await clients.billing.listAddons({ caller, serviceId: params.id, available: false })).result,
      ),
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
      data: fromJson(
        (await clients.billing.listAddons({ caller, serviceId: params.id, available: true })).result,
      ),
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
    response: addons.addonPurchase,
    example: addons.addonPurchaseExample,
    body: z.object({
      optionId: idParam,
      billingType: z.enum(["one_time", "recurring"], { error: "must be one_time or recurring" }),
      billingCycle: z.string().optional(),
      quantity: z
        .number({ error: "must be a whole number" })
        .int({ error: "must be a whole number" })
        .min(1)
        .max(100)
        .default(1),
    }),
    successStatus: 201,
    cooldown: buying,
    handler: async ({ clients, caller, params, body, req }) => ({
      data: fromJson(
        (
          await clients.billing.buyAddon({
            caller,
            serviceId: params.id,
            optionId: body.optionId,
            billingType: body.billingType,
            billingCycle: body.billingCycle ?? "",
            quantity: body.quantity,
            ...idempotencyOf(req),
          })
        ).result,
      ),
    }),
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
      data: fromJson(
        (await clients.billing.cancelAddon({ caller, serviceId: params.id, optionId: params.optionId }))
          .result,
      ),
      extra: { message: "Add-on cancelled" },
    }),
  }),
  route({
    method: "get",
    path: "/services/:id/upgrades",
    tag: "Add-ons and upgrades",
    summary: "Upgrade paths with a prorated preview, plus any pending upgrade",
    auth: view,
    params: id,
    response: upgrades.upgradePaths,
    example: upgrades.upgradePathsExample,
    handler: async ({ clients, caller, params }) => ({
      data: fromJson((await clients.billing.listUpgradePaths({ caller, serviceId: params.id })).result),
    }),
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
    response: upgrades.upgrade,
    example: upgrades.upgradeExample,
    body: z.object({ toProductId: idParam }),
    successStatus: 201,
    cooldown: buying,
    handler: async ({ clients, caller, params, body, req }) => ({
      data: fromJson(
        (
          await clients.billing.requestUpgrade({
            caller,
            serviceId: params.id,
            toProductId: body.toProductId,
            ...idempotencyOf(req),
          })
        ).result,
      ),
    }),
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
    cooldown: buying,
    handler: async ({ clients, caller, params, body, req }) => ({
      data: fromJson(
        (
          await clients.billing.requestUpgrade({
            caller,
            serviceId: params.id,
            addOptions: body.addOptions,
            removeOptions: body.removeOptions,
            ...idempotencyOf(req),
          })
        ).result,
      ),
    }),
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
    handler: async ({ clients, caller, params }) => ({
      data: fromJson((await clients.billing.getUpgrade({ caller, upgradeId: params.id })).result),
    }),
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
    handler: async ({ clients, caller, params }) => ({
      data: fromJson((await clients.billing.cancelUpgrade({ caller, upgradeId: params.id })).result),
      extra: { message: "Upgrade cancelled" },
    }),
  }),
];
