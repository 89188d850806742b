import { ProductKind } from "@hb/contracts/hb/billing/v1/common_pb";
import { MachineKind } from "@hb/contracts/hb/compute/v1/machines_pb";
import { apiError } from "@hb/platform";
import { PAGE_SIZE } from "@hb/platform/paging";
import { z } from "zod";
import { cooldowns } from "../cooldowns.ts";
import { vpsDetailJson, vpsStatus } from "../mappers/machine.ts";
import { reinstallResultJson } from "../mappers/machine-action.ts";
import { route } from "../route.ts";
import { idParam, pageQuery, password } from "../schemas.ts";
import {
  addressList,
  examples as machineEx,
  machineStats,
  osImages,
  usageRangeQuery,
  vpsCancelled,
  vpsCancelledExample,
  vpsDetail,
  vpsRecord,
} from "../wire/machine.ts";
import { examples as actionEx, powerResult, reinstallResult } from "../wire/machine-action.ts";
import { pagination as paginationSchema } from "../wire/pagination.ts";
import { id, manage, powerPerms, serviceWire, viewServices } from "./machine-common.ts";
import { passwordRoute } from "./machine-password.ts";
import { runPower } from "./machine-power.ts";
import { addresses, getMachine, images, listMachines, STATS_RANGE, stats } from "./machine-reads.ts";

const VPS_ACTIONS = ["start", "stop", "shutdown", "reboot", "restart", "poweroff"] as const;

export const vpsRoutes = [
  route({
    method: "get",
    path: "/vps",
    tag: "VPS",
    summary: "VPS list (default limit 50), pagination beside data",
    auth: { scope: "read", permissions: [...viewServices] },
    query: pageQuery(PAGE_SIZE.machines),
    response: z.array(vpsRecord),
    responseExtra: { pagination: paginationSchema },
    exampleExtra: { pagination: { page: 1, limit: 50, total: 1, pages: 1 } },
    example: machineEx.vpsList,
    handler: (ctx) => listMachines(ctx, "vps"),
  }),
  route({
    method: "get",
    path: "/vps/:id",
    tag: "VPS",
    summary: "VPS detail including capabilities",
    auth: { scope: "read", permissions: [...viewServices] },
    params: id,
    response: vpsDetail,
    example: machineEx.vpsDetail,
    handler: (ctx) => getMachine(ctx, "vps", vpsDetailJson),
  }),
  route({
    method: "get",
    path: "/vps/:id/ips",
    tag: "VPS",
    summary: "Authoritative address list",
    auth: { scope: "read", permissions: [...viewServices] },
    params: id,
    response: addressList,
    example: machineEx.addressList,
    handler: addresses(MachineKind.VPS),
  }),
  route({
    method: "get",
    path: "/vps/:id/stats",
    tag: "VPS",
    summary: `Processor, memory, disk and network figures${STATS_RANGE}`,
    auth: { scope: "read", permissions: [...viewServices] },
    params: id,
    query: usageRangeQuery,
    response: machineStats,
    example: machineEx.statsHistory,
    handler: stats(MachineKind.VPS),
  }),
  route({
    method: "get",
    path: "/vps/:id/os-images",
    tag: "VPS",
    summary: "Exactly the images a reinstall accepts; empty means none enabled for the plan",
    auth: { scope: "read", permissions: [...viewServices] },
    params: id,
    response: osImages,
    example: machineEx.osImages,
    handler: images(MachineKind.VPS),
  }),
  ...VPS_ACTIONS.map((action) =>
    route({
      method: "post",
      path: `/vps/:id/${action}`,
      tag: "VPS",
      summary: `Power: ${action}${action === "stop" ? " (graceful shutdown, then forced power-off after a grace window)" : action === "restart" ? " (same as reboot)" : ""}`,
      auth: { scope: "services", permissions: [...powerPerms] },
      errors: ["CONFLICT", "ACTION_NOT_ALLOWED"],
      params: id,
      response: powerResult,
      example: actionEx.power,
      // The canonical operation takes the action as a parameter; these per-action paths are aliases.
      aliasOf: "postVpsIdPowerAction",
      cooldown: cooldowns.power,
      handler: runPower(MachineKind.VPS, () => action),
    }),
  ),
  route({
    method: "post",
    path: "/vps/:id/power/:action",
    tag: "VPS",
    summary: "Power action by name: start, stop, restart, reboot, shutdown, poweroff",
    auth: { scope: "services", permissions: [...powerPerms] },
    errors: ["CONFLICT", "ACTION_NOT_ALLOWED"],
    params: z.object({
      id: idParam,
      action: z.enum(VPS_ACTIONS, { error: `must be one of ${VPS_ACTIONS.join(", ")}` }),
    }),
    response: powerResult,
    example: actionEx.power,
    cooldown: cooldowns.power,
    handler: runPower(MachineKind.VPS, (c) => c.params.action ?? ""),
  }),
  route({
    method: "post",
    path: "/vps/:id/reinstall",
    tag: "VPS",
    summary: "Reinstall from an image of /os-images; erases the disk",
    auth: { scope: "services", permissions: [...manage] },
    errors: ["CONFLICT", "ACTION_NOT_ALLOWED"],
    params: id,
    body: z.object({
      image_id: z.string({ error: "is required" }).min(1, { error: "is required" }),
      password,
    }),
    response: reinstallResult,
    example: actionEx.reinstall,
    cooldown: cooldowns.reinstall,
    handler: async ({ clients, caller, params, body }) => ({
      data: reinstallResultJson(
        await clients.compute.reinstall({
          caller,
          serviceId: params.id,
          kind: MachineKind.VPS,
          imageId: body.image_id,
          password: body.password,
        }),
      ),
    }),
  }),
  passwordRoute(
    "/vps/:id/password",
    "VPS",
    MachineKind.VPS,
    "Reset the root password (minimum 8 characters); the machine must be running",
  ),
];

export const vpsCancelRoute = route({
  method: "delete",
  path: "/vps/:id",
  tag: "VPS",
  summary: "Cancel the VPS: at the end of the term, or with immediate = true destroy the disks at once",
  auth: { scope: "destructive", permissions: ["cancel_services"] },
  errors: ["CONFLICT"],
  params: id,
  body: z.object({
    reason: z.string().max(1000).default(""),
    immediate: z.boolean({ error: "must be true or false" }).default(false),
  }),
  response: vpsCancelled,
  responseExtra: { message: z.string() },
  example: vpsCancelledExample,
  exampleExtra: { message: "Cancellation scheduled for the end of the term" },
  cooldown: cooldowns.cancel,
  handler: async ({ clients, caller, params, body }) => {
    const [{ services }] = await Promise.all([
      clients.billing.getServiceSummaries({ caller, serviceIds: [params.id] }),
    ]);
    if (services[0]?.kind !== ProductKind.VPS) throw apiError("NOT_FOUND", "VPS not found");
    const { service } = await clients.billing.cancelService({
      caller,
      serviceId: params.id,
      reason: body.reason,
      immediate: body.immediate,
    });
    const summary = serviceWire(service!);
    return {
      data: { id: summary.id, status: vpsStatus(summary.status), cancellation: summary.cancellation },
      extra: {
        message: body.immediate
          ? "VPS terminated; its disks are destroyed"
          : "Cancellation scheduled for the end of the term",
      },
    };
  },
});
