import type { Client } from "@connectrpc/connect";
import { ProductKind } from "@hb/contracts/hb/billing/v1/common_pb";
import type { ServiceSummary } from "@hb/contracts/hb/billing/v1/services_pb";
import type { ComputeService, MachineRecord } from "@hb/contracts/hb/compute/v1/compute_pb";
import { JobStatus } from "@hb/contracts/hb/compute/v1/jobs_pb";
import { MachineKind, type MachineSummary } from "@hb/contracts/hb/compute/v1/machines_pb";
import { apiError } from "@hb/platform";
import { PAGE_SIZE } from "@hb/platform/paging";
import { z } from "zod";
import { cooldowns } from "../cooldowns.ts";
import { asBodyFields } from "../field-names.ts";
import { backupCreatedJson, backupJson } from "../mappers/backup.ts";
import { jobStatuses, powerActions } from "../mappers/compute-wire.ts";
import { productKindWords } from "../mappers/enums.ts";
import { addressListJson } from "../mappers/ip-address.ts";
import { jobJson } from "../mappers/job.ts";
import {
  dedicatedDetailJson,
  dedicatedRecordJson,
  vpsDetailJson,
  vpsRecordJson,
  vpsStatus,
} from "../mappers/machine.ts";
import {
  dispatchResultJson,
  passwordResultJson,
  pendingJson,
  powerResultJson,
  reinstallResultJson,
} from "../mappers/machine-action.ts";
import { machineStatsJson, trafficJson, usageRange } from "../mappers/machine-stats.ts";
import { powerStatusJson, provisionStatusJson } from "../mappers/machine-status.ts";
import { osImageListJson } from "../mappers/os-image.ts";
import { serviceSummaryJson } from "../mappers/service.ts";
import { gameDetailJson, serviceActionsJson } from "../mappers/service-control.ts";
import { snapshotCreatedJson, snapshotJson } from "../mappers/snapshot.ts";
import { sshKeyJson } from "../mappers/ssh-key.ts";
import { type Context, route } from "../route.ts";
import { displayName, idParam, pageQuery, pagination, password, sshPasswordLogin } from "../schemas.ts";
import {
  backupCreated,
  backupList,
  examples as copyEx,
  snapshotCreated,
  snapshotList,
} from "../wire/copy.ts";
import { JOB_STATUSES, job, jobExample, jobList, jobListExample } from "../wire/job.ts";
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
  vpsCancelled,
  vpsCancelledExample,
  vpsDetail,
  vpsRecord,
} from "../wire/machine.ts";
import {
  examples as actionEx,
  dispatchResult,
  passwordResult,
  pendingResult,
  powerResult,
  reinstallResult,
} from "../wire/machine-action.ts";
import { pagination as paginationSchema } from "../wire/pagination.ts";
import type { serviceSummary } from "../wire/service.ts";
import { examples as controlEx, gameDetail, serviceActions } from "../wire/service-control.ts";
import { deleted, examples as sshEx, sshKey, sshKeyList } from "../wire/ssh-key.ts";

type ServiceWire = z.infer<typeof serviceSummary>;
type MachineMapper<T> = (s: ServiceWire, m: MachineSummary | undefined) => T;

/** Billing's service summary in the wire shape the machine records compose. */
const serviceWire: (s: ServiceSummary) => ServiceWire = serviceSummaryJson;

/** A machine record on the wire; compute never sends one without its service. */
const recordOf = <T>(r: MachineRecord, map: MachineMapper<T>): T =>
  map(serviceWire(r.service as ServiceSummary), r.machine);

/**
 * A page of machines of one kind: one compute call, which answers from its copy of billing's
 * service records with each record's machine (docs/architecture.md, "Machine pages").
 */
async function listMachines<T>(
  ctx: Context<unknown, { page: number; limit: number }, unknown>,
  kind: "vps" | "dedicated",
  record: MachineMapper<T>,
) {
  const { records, total } = await ctx.clients.compute.listMachineRecords({
    caller: ctx.caller,
    kind: productKindWords.value(kind),
    page: ctx.query.page,
    limit: ctx.query.limit,
  });
  return {
    data: records.map((r) => recordOf(r, record)),
    extra: { pagination: pagination(ctx.query.page, ctx.query.limit, total) },
  };
}

async function getMachine<T>(
  ctx: Context<{ id: string }, unknown, unknown>,
  kind: "vps" | "dedicated",
  detail: MachineMapper<T>,
) {
  const { record } = await ctx.clients.compute.getMachineRecord({
    caller: ctx.caller,
    serviceId: ctx.params.id,
    kind: productKindWords.value(kind),
  });
  if (!record?.service) {
    throw apiError("NOT_FOUND", `${kind === "vps" ? "VPS" : "Dedicated server"} not found`);
  }
  return { data: recordOf(record, detail) };
}

const id = z.object({ id: idParam });
const viewServices = ["view_services"] as const;
const powerPerms = ["manage_services", "power_services"] as const;
const manage = ["manage_services"] as const;

type Compute = Client<typeof ComputeService>;
/** What every read about one machine sends: whose call, which service, which kind is expected. */
type MachineRef = {
  caller: Context<unknown, unknown, unknown>["caller"];
  serviceId: string;
  kind: MachineKind;
};

/** A read about one machine, mapped to the wire. */
const read =
  <R>(kind: MachineKind, call: (compute: Compute, ref: MachineRef) => Promise<R>, map: (r: R) => unknown) =>
  async (ctx: Context<{ id: string }, unknown, unknown>) => ({
    data: map(await call(ctx.clients.compute, { caller: ctx.caller, serviceId: ctx.params.id, kind })),
  });

const addresses = (kind: MachineKind) =>
  read(
    kind,
    (c, ref) => c.listIpAddresses(ref),
    (r) => addressListJson(r.ipAddresses),
  );
/** The live figures, and the usage history over ?range= when one is given. */
const stats =
  (kind: MachineKind) => async (ctx: Context<{ id: string }, z.infer<typeof usageRangeQuery>, unknown>) => {
    const r = await ctx.clients.compute.getMachineStats({
      caller: ctx.caller,
      serviceId: ctx.params.id,
      kind,
      range: usageRange(ctx.query.range),
    });
    return { data: machineStatsJson(required(r.stats, "stats"), r.history) };
  };
const STATS_RANGE =
  "; ?range=1h|24h|7d|30d adds the usage history (1-minute, 5-minute, 30-minute or 2-hour averages)";
const images = (kind: MachineKind) =>
  read(
    kind,
    (c, ref) => c.listOsImages(ref),
    (r) => osImageListJson(r.images),
  );

/** A field compute always sets; its absence is a contract violation (500), not a customer error. */
function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`compute answered without ${what}`);
  return value;
}

/**
 * A power action by its wire name. A name the enum does not have goes as UNSPECIFIED: compute
 * refuses it with the actions the machine's kind takes, which only compute knows.
 */
const runPower =
  (kind: MachineKind, action: (ctx: Context<{ id: string; action?: string }, unknown, unknown>) => string) =>
  async (ctx: Context<{ id: string; action?: string }, unknown, unknown>) => {
    const { result } = await ctx.clients.compute.runPowerAction({
      caller: ctx.caller,
      serviceId: ctx.params.id,
      kind,
      action: powerActions.parse(action(ctx)),
    });
    return { data: powerResultJson(result) };
  };

/** Root password reset: the same rules on the VPS and the generic service routes. */
function passwordRoute(path: string, tag: string, kind: MachineKind, summary: string) {
  return route({
    method: "post",
    path,
    tag,
    summary,
    auth: { scope: "services", permissions: [...manage] },
    params: id,
    body: z.object({ password, ssh_password_login: sshPasswordLogin.optional() }),
    response: passwordResult,
    example: actionEx.password,
    // A generic service may be a dedicated server, whose rebuild the controller can refuse.
    errors:
      kind === MachineKind.VPS
        ? ["CONFLICT", "ACTION_NOT_ALLOWED"]
        : ["CONFLICT", "ACTION_NOT_ALLOWED", "PROVIDER_ERROR"],
    cooldown: cooldowns.password,
    handler: async ({ clients, caller, params, body }) => ({
      data: passwordResultJson(
        await clients.compute.resetPassword({
          caller,
          serviceId: params.id,
          kind,
          password: body.password,
          sshPasswordLogin: body.ssh_password_login,
        }),
      ),
    }),
  });
}

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
    handler: (ctx) => listMachines(ctx, "vps", vpsRecordJson),
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
    handler: (ctx) => listMachines(ctx, "dedicated", dedicatedRecordJson),
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

export const sshKeyRoutes = [
  route({
    method: "get",
    path: "/ssh-keys",
    tag: "SSH keys",
    summary: "Stored public keys",
    auth: { scope: "read", permissions: [...viewServices] },
    response: sshKeyList,
    example: sshEx.sshKeyList,
    handler: async ({ clients, caller }) => ({
      data: { ssh_keys: (await clients.compute.listSshKeys({ caller })).sshKeys.map(sshKeyJson) },
    }),
  }),
  route({
    method: "post",
    path: "/ssh-keys",
    tag: "SSH keys",
    summary: "Store a public key line; the answer has the key and its fingerprint",
    auth: { scope: "services", permissions: [...manage] },
    errors: ["CONFLICT"],
    body: z.object({
      name: displayName,
      publicKey: z.string({ error: "is required" }).min(1, { error: "is required" }).max(16_384),
    }),
    successStatus: 201,
    response: sshKey,
    example: sshEx.sshKey,
    handler: async ({ clients, caller, body }) => {
      const { sshKey } = await asBodyFields(
        clients.compute.createSshKey({ caller, name: body.name, publicKey: body.publicKey }),
        { public_key: "publicKey" },
      );
      return { data: sshKeyJson(required(sshKey, "the SSH key")) };
    },
  }),
  route({
    method: "delete",
    path: "/ssh-keys/:id",
    tag: "SSH keys",
    summary: "Remove one stored key",
    auth: { scope: "services", permissions: [...manage] },
    params: id,
    response: deleted,
    example: sshEx.deleted,
    handler: async ({ clients, caller, params }) => {
      await clients.compute.deleteSshKey({ caller, sshKeyId: params.id });
      return { data: { id: params.id, deleted: true } };
    },
  }),
  route({
    method: "get",
    path: "/jobs",
    tag: "Jobs",
    summary:
      "The customer's jobs, newest first (default 20; ?state, ?resource (a service id) and ?action narrow; pagination inside data)",
    auth: { scope: "read", permissions: [...viewServices] },
    query: pageQuery(PAGE_SIZE.default).extend({
      state: z.enum(JOB_STATUSES, { error: `must be one of ${JOB_STATUSES.join(", ")}` }).optional(),
      resource: idParam.optional(),
      action: z
        .string({ error: "must be a string" })
        .regex(/^[a-z_]{1,40}$/, { error: "must be an action name such as reboot or snapshot_create" })
        .optional(),
    }),
    response: jobList,
    example: jobListExample,
    handler: async ({ clients, caller, query }) => {
      const list = await clients.compute.listJobs({
        caller,
        status: query.state ? jobStatuses.value(query.state) : JobStatus.UNSPECIFIED,
        serviceId: query.resource ?? "",
        action: query.action ?? "",
        page: query.page,
        limit: query.limit,
      });
      return {
        data: {
          jobs: list.jobs.map(jobJson),
          pagination: pagination(query.page, query.limit, list.total),
        },
      };
    },
  }),
  route({
    method: "get",
    path: "/jobs/:id",
    tag: "Jobs",
    summary: "An accepted action's job: status (running, succeeded, failed), progress, times and any error",
    auth: { scope: "read", permissions: [...viewServices] },
    params: id,
    response: job,
    example: jobExample,
    handler: async ({ clients, caller, params }) => {
      const { job } = await clients.compute.getJob({ caller, jobId: params.id });
      return { data: jobJson(required(job, "the job")) };
    },
  }),
];

const snapshotAuth = (scope: "read" | "services") =>
  ({ scope, permissions: scope === "read" ? [...viewServices] : [...manage], module: "vps" }) as const;
const withCopy = z.object({ id: idParam, copyId: idParam });

export const copyRoutes = [
  route({
    method: "get",
    path: "/vps/:id/snapshots",
    tag: "VPS",
    summary: "Snapshots",
    auth: snapshotAuth("read"),
    errors: ["ACTION_NOT_ALLOWED"],
    params: id,
    response: snapshotList,
    example: copyEx.snapshotList,
    handler: async ({ clients, caller, params }) => {
      const { snapshots } = await clients.compute.listSnapshots({ caller, serviceId: params.id });
      return { data: { snapshots: snapshots.map(snapshotJson) } };
    },
  }),
  route({
    method: "post",
    path: "/vps/:id/snapshots",
    tag: "VPS",
    summary: "Create a snapshot (body: optional name)",
    auth: snapshotAuth("services"),
    errors: ["CONFLICT", "ACTION_NOT_ALLOWED"],
    params: id,
    body: z.object({ name: z.string().max(100).optional() }),
    response: snapshotCreated,
    example: copyEx.snapshotCreated,
    handler: async ({ clients, caller, params, body }) => ({
      data: snapshotCreatedJson(
        await clients.compute.createSnapshot({ caller, serviceId: params.id, name: body.name ?? "" }),
      ),
    }),
  }),
  route({
    method: "post",
    path: "/vps/:id/snapshots/:copyId/revert",
    tag: "VPS",
    summary: "Revert the VPS to a snapshot",
    auth: snapshotAuth("services"),
    errors: ["CONFLICT", "ACTION_NOT_ALLOWED"],
    params: withCopy,
    response: pendingResult,
    example: actionEx.pending,
    handler: async ({ clients, caller, params }) => {
      const { jobId } = await clients.compute.revertSnapshot({
        caller,
        serviceId: params.id,
        snapshotId: params.copyId,
      });
      return { data: pendingJson(jobId) };
    },
  }),
  route({
    method: "delete",
    path: "/vps/:id/snapshots/:copyId",
    tag: "VPS",
    summary: "Delete a snapshot",
    auth: snapshotAuth("services"),
    errors: ["CONFLICT", "ACTION_NOT_ALLOWED"],
    params: withCopy,
    response: deleted,
    example: { id: copyEx.snapshotList.snapshots[0].id, deleted: true },
    handler: async ({ clients, caller, params }) => {
      await clients.compute.deleteSnapshot({ caller, serviceId: params.id, snapshotId: params.copyId });
      return { data: { id: params.copyId, deleted: true } };
    },
  }),
  route({
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
  }),
  route({
    method: "get",
    path: "/services/:id/backups",
    tag: "Service control",
    summary: "Provider backups",
    auth: { scope: "read", permissions: [...viewServices] },
    errors: ["ACTION_NOT_ALLOWED"],
    params: id,
    response: backupList,
    example: copyEx.backupList,
    handler: async ({ clients, caller, params }) => {
      const { backups } = await clients.compute.listBackups({ caller, serviceId: params.id });
      return { data: { backups: backups.map(backupJson) } };
    },
  }),
  route({
    method: "post",
    path: "/services/:id/backups",
    tag: "Service control",
    summary: "Create a provider backup (2 per 10 minutes with restores)",
    auth: { scope: "services", permissions: [...manage] },
    errors: ["CONFLICT", "ACTION_NOT_ALLOWED"],
    params: id,
    body: z.object({ name: z.string().max(100).optional() }),
    response: backupCreated,
    example: copyEx.backupCreated,
    cooldown: cooldowns.backup,
    handler: async ({ clients, caller, params, body }) => ({
      data: backupCreatedJson(
        await clients.compute.createBackup({ caller, serviceId: params.id, name: body.name ?? "" }),
      ),
    }),
  }),
  route({
    method: "post",
    path: "/services/:id/backups/:copyId/restore",
    tag: "Service control",
    summary: "Restore a backup",
    auth: { scope: "services", permissions: [...manage] },
    errors: ["CONFLICT", "ACTION_NOT_ALLOWED"],
    params: withCopy,
    response: pendingResult,
    example: actionEx.pending,
    cooldown: cooldowns.backup,
    handler: async ({ clients, caller, params }) => {
      const { jobId } = await clients.compute.restoreBackup({
        caller,
        serviceId: params.id,
        backupId: params.copyId,
      });
      return { data: pendingJson(jobId) };
    },
  }),
];
