import { MachineKind } from "@hb/contracts/hb/compute/v1/machines_pb";
import { z } from "zod";
import { cooldowns } from "../cooldowns.ts";
import { asBodyFields } from "../field-names.ts";
import { dispatchResultJson, reinstallResultJson } from "../mappers/machine-action.ts";
import { gameDetailJson, serviceActionsJson } from "../mappers/service-control.ts";
import { route } from "../route.ts";
import { idParam, password } from "../schemas.ts";
import { examples as machineEx, machineStats, usageRangeQuery } from "../wire/machine.ts";
import {
  examples as actionEx,
  dispatchResult,
  powerResult,
  reinstallResult,
} from "../wire/machine-action.ts";
import { examples as controlEx, gameDetail, serviceActions } from "../wire/service-control.ts";
import { id, manage, powerPerms, required, viewServices } from "./machine-common.ts";
import { passwordRoute } from "./machine-password.ts";
import { runPower } from "./machine-power.ts";
import { read, STATS_RANGE, stats } from "./machine-reads.ts";

const GAME_ACTIONS = ["start", "stop", "restart", "kill"] as const;
/** The generic service routes act on a machine of any kind. */
const ANY = MachineKind.UNSPECIFIED;

/** Service control on any backend (the generic service routes). */
export const controlRoutes = [
  route({
    method: "get",
    path: "/services/:id/stats",
    tag: "Service control",
    summary: `Usage statistics${STATS_RANGE}`,
    auth: { scope: "read", permissions: [...viewServices] },
    params: id,
    query: usageRangeQuery,
    response: machineStats,
    example: machineEx.stats,
    handler: stats(ANY),
  }),
  route({
    method: "get",
    path: "/services/:id/actions",
    tag: "Service control",
    summary: "Which actions the service accepts and which backend it is on",
    auth: { scope: "read", permissions: [...viewServices] },
    params: id,
    response: serviceActions,
    example: controlEx.serviceActions,
    handler: read(
      ANY,
      (c, ref) => c.listMachineActions(ref),
      (r) => serviceActionsJson(required(r.actions, "actions")),
    ),
  }),
  route({
    method: "get",
    path: "/services/:id/game",
    tag: "Service control",
    summary: "Game-server detail (game services only)",
    auth: { scope: "read", permissions: [...viewServices] },
    params: id,
    response: gameDetail,
    example: controlEx.gameDetail,
    handler: async ({ clients, caller, params }) => {
      const { gameServer } = await clients.compute.getGameServer({ caller, serviceId: params.id });
      return { data: gameDetailJson(required(gameServer, "the game server")) };
    },
  }),
  route({
    method: "post",
    path: "/services/:id/actions/:action",
    tag: "Service control",
    summary:
      "Generic dispatcher: start, stop, restart, status, stats, plus any provider action exposed to customers",
    auth: { scope: "services", permissions: [...powerPerms] },
    errors: ["CONFLICT", "ACTION_NOT_ALLOWED", "PROVIDER_ERROR"],
    params: z.object({
      id: idParam,
      action: z.string().regex(/^[a-z][a-z0-9_-]{0,40}$/, { error: "is not a valid action name" }),
    }),
    body: z.object({ params: z.record(z.string(), z.unknown()).optional() }),
    response: dispatchResult,
    example: actionEx.power,
    cooldown: cooldowns.power,
    handler: async ({ clients, caller, params }) => ({
      data: dispatchResultJson(
        await clients.compute.dispatchAction({ caller, serviceId: params.id, action: params.action }),
      ),
    }),
  }),
  route({
    method: "post",
    path: "/services/:id/power/:action",
    tag: "Service control",
    summary: "Power action by name on any backend",
    auth: { scope: "services", permissions: [...powerPerms] },
    errors: ["CONFLICT", "ACTION_NOT_ALLOWED", "PROVIDER_ERROR"],
    params: z.object({
      id: idParam,
      action: z.string().regex(/^[a-z]{1,20}$/, { error: "is not a valid action name" }),
    }),
    response: powerResult,
    example: actionEx.power,
    cooldown: cooldowns.power,
    handler: runPower(ANY, (c) => c.params.action ?? ""),
  }),
  route({
    method: "post",
    path: "/services/:id/game/power/:action",
    tag: "Service control",
    summary: "Game server power: start, stop, restart or kill",
    auth: { scope: "services", permissions: [...powerPerms] },
    errors: ["CONFLICT", "ACTION_NOT_ALLOWED", "PROVIDER_ERROR"],
    params: z.object({
      id: idParam,
      action: z.enum(GAME_ACTIONS, { error: "must be one of start, stop, restart, kill" }),
    }),
    response: powerResult,
    example: actionEx.power,
    cooldown: cooldowns.power,
    handler: runPower(MachineKind.GAME, (c) => c.params.action ?? ""),
  }),
  route({
    method: "post",
    path: "/services/:id/reinstall",
    tag: "Service control",
    summary: "Reinstall the OS; erases the disk",
    auth: { scope: "services", permissions: [...manage] },
    errors: ["CONFLICT", "ACTION_NOT_ALLOWED"],
    params: id,
    body: z.object({
      image_id: z.string().min(1).optional(),
      osImageId: z.string().min(1).optional(),
      password: password.optional(),
    }),
    response: reinstallResult,
    example: actionEx.reinstall,
    cooldown: cooldowns.reinstall,
    handler: async ({ clients, caller, params, body }) => {
      // Without an image in the body, the machine's first offered image.
      const imageId =
        body.image_id ??
        body.osImageId ??
        (await clients.compute.listOsImages({ caller, serviceId: params.id, kind: ANY })).images[0]?.id ??
        "";
      const reinstall = clients.compute.reinstall({
        caller,
        serviceId: params.id,
        kind: ANY,
        imageId,
        password: body.password ?? "",
      });
      // A refusal names the field the body used.
      const names: Record<string, string> =
        body.image_id === undefined && body.osImageId !== undefined ? { image_id: "osImageId" } : {};
      return { data: reinstallResultJson(await asBodyFields(reinstall, names)) };
    },
  }),
  passwordRoute(
    "/services/:id/password",
    "Service control",
    ANY,
    "Set a new root password (minimum 8 characters)",
  ),
];
