import { MachineKind } from "@hb/contracts/hb/compute/v1/machines_pb";
import { PAGE_SIZE } from "@hb/platform/paging";
import { z } from "zod";
import { cooldowns } from "../cooldowns.ts";
import { asBodyFields } from "../field-names.ts";
import { dedicatedDetailJson } from "../mappers/machine.ts";
import { passwordResultJson, reinstallResultJson } from "../mappers/machine-action.ts";
import { trafficJson } from "../mappers/machine-stats.ts";
import { powerStatusJson, provisionStatusJson } from "../mappers/machine-status.ts";
import { route } from "../route.ts";
import { idParam, pageQuery, password } from "../schemas.ts";
import {
  addressList,
  dedicatedDetail,
  dedicatedRecord,
  examples as machineEx,
  machineStats,
  osImages,
  powerStatus,
  provisionStatus,
  traffic,
  usageRangeQuery,
} from "../wire/machine.ts";
import {
  examples as actionEx,
  passwordResult,
  powerResult,
  reinstallResult,
} from "../wire/machine-action.ts";
import { pagination as paginationSchema } from "../wire/pagination.ts";
import { id, manage, powerPerms, required, viewServices } from "./machine-common.ts";
import { runPower } from "./machine-power.ts";
import { addresses, getMachine, images, listMachines, read, STATS_RANGE, stats } from "./machine-reads.ts";

const DEDICATED_ACTIONS = ["on", "off", "restart"] as const;
const DEDICATED = MachineKind.DEDICATED;
const inventory = { scope: "read" as const, permissions: [...viewServices], module: "inventory" as const };

export const dedicatedRoutes = [
  route({
    method: "get",
    path: "/dedicated",
    tag: "Dedicated servers",
    summary: "Dedicated servers (default limit 50), pagination beside data",
    auth: inventory,
    query: pageQuery(PAGE_SIZE.machines),
    response: z.array(dedicatedRecord),
    responseExtra: { pagination: paginationSchema },
    exampleExtra: { pagination: { page: 1, limit: 50, total: 1, pages: 1 } },
    example: machineEx.dedicatedList,
    handler: (ctx) => listMachines(ctx, "dedicated"),
  }),
  route({
    method: "get",
    path: "/dedicated/:id",
    tag: "Dedicated servers",
    summary: "Hardware, location, provisioning and OS state",
    auth: inventory,
    params: id,
    response: dedicatedDetail,
    example: machineEx.dedicatedDetail,
    handler: (ctx) => getMachine(ctx, "dedicated", dedicatedDetailJson),
  }),
  ...(
    [
      ["ips", "Subnets and addresses", addressList, machineEx.addressList, addresses(DEDICATED)],
      [
        "power-status",
        "Current power state",
        powerStatus,
        machineEx.powerStatus,
        read(
          DEDICATED,
          (c, ref) => c.getPowerStatus(ref),
          (r) => powerStatusJson(required(r.status, "power status")),
        ),
      ],
      [
        "traffic",
        "Bandwidth usage",
        traffic,
        machineEx.traffic,
        read(
          DEDICATED,
          (c, ref) => c.getTraffic(ref),
          (r) => trafficJson(required(r.traffic, "traffic")),
        ),
      ],
      [
        "provision-status",
        "Deployment or reinstall progress",
        provisionStatus,
        machineEx.provisionStatus,
        read(DEDICATED, (c, ref) => c.getProvisionStatus(ref), provisionStatusJson),
      ],
      [
        "os-images",
        "Images this server may be reinstalled onto",
        osImages,
        machineEx.osImages,
        images(DEDICATED),
      ],
    ] as const
  ).map(([what, summary, response, example, handler]) =>
    route({
      method: "get",
      path: `/dedicated/:id/${what}`,
      tag: "Dedicated servers",
      summary,
      auth: inventory,
      params: id,
      response,
      example,
      handler,
    }),
  ),
  route({
    method: "get",
    path: "/dedicated/:id/stats",
    tag: "Dedicated servers",
    summary: `Hardware specification and live power state${STATS_RANGE}`,
    auth: inventory,
    params: id,
    query: usageRangeQuery,
    response: machineStats,
    example: machineEx.stats,
    handler: stats(DEDICATED),
  }),
  route({
    method: "post",
    path: "/dedicated/:id/power",
    tag: "Dedicated servers",
    summary: "Power action in the body: on, off or restart",
    auth: { scope: "services", permissions: [...powerPerms], module: "inventory" },
    errors: ["CONFLICT", "ACTION_NOT_ALLOWED", "PROVIDER_ERROR"],
    params: id,
    body: z.object({ action: z.enum(DEDICATED_ACTIONS, { error: "must be one of on, off, restart" }) }),
    response: powerResult,
    example: actionEx.power,
    cooldown: cooldowns.dedicatedPower,
    handler: (ctx) => runPower(DEDICATED, () => ctx.body.action)(ctx),
  }),
  route({
    method: "post",
    path: "/dedicated/:id/power/:action",
    tag: "Dedicated servers",
    summary: "Power action in the path: on, off or restart",
    auth: { scope: "services", permissions: [...powerPerms], module: "inventory" },
    errors: ["CONFLICT", "ACTION_NOT_ALLOWED", "PROVIDER_ERROR"],
    params: z.object({
      id: idParam,
      action: z.enum(DEDICATED_ACTIONS, { error: "must be one of on, off, restart" }),
    }),
    response: powerResult,
    example: actionEx.power,
    // The spec's "same, action in the path": the body form above is the canonical one.
    aliasOf: "postDedicatedIdPower",
    cooldown: cooldowns.dedicatedPower,
    handler: runPower(DEDICATED, (c) => c.params.action ?? ""),
  }),
  route({
    method: "post",
    path: "/dedicated/:id/reinstall",
    tag: "Dedicated servers",
    summary: "Reinstall onto osImageId; erases all data",
    auth: { scope: "services", permissions: [...manage], module: "inventory" },
    errors: ["CONFLICT", "ACTION_NOT_ALLOWED"],
    params: id,
    body: z.object({ osImageId: z.string({ error: "is required" }).min(1, { error: "is required" }) }),
    response: reinstallResult,
    example: actionEx.reinstall,
    cooldown: cooldowns.reinstall,
    handler: async ({ clients, caller, params, body }) => ({
      data: reinstallResultJson(
        await asBodyFields(
          clients.compute.reinstall({
            caller,
            serviceId: params.id,
            kind: DEDICATED,
            imageId: body.osImageId,
            password: "",
          }),
          { image_id: "osImageId" },
        ),
      ),
    }),
  }),
  route({
    method: "post",
    path: "/dedicated/:id/password",
    tag: "Dedicated servers",
    summary: "New root password; platform-provisioned servers are rebuilt and get a generated password",
    auth: { scope: "services", permissions: [...manage], module: "inventory" },
    errors: ["CONFLICT", "ACTION_NOT_ALLOWED"],
    params: id,
    body: z.object({ password: password.optional() }),
    response: passwordResult,
    example: actionEx.dedicatedPassword,
    cooldown: cooldowns.password,
    handler: async ({ clients, caller, params, body }) => ({
      data: passwordResultJson(
        await clients.compute.resetPassword({
          caller,
          serviceId: params.id,
          kind: DEDICATED,
          password: body.password ?? "",
        }),
      ),
    }),
  }),
];
