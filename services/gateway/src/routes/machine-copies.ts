import { z } from "zod";
import { cooldowns } from "../cooldowns.ts";
import { backupCreatedJson, backupJson } from "../mappers/backup.ts";
import { pendingJson } from "../mappers/machine-action.ts";
import { snapshotCreatedJson, snapshotJson } from "../mappers/snapshot.ts";
import { route } from "../route.ts";
import { idParam } from "../schemas.ts";
import {
  backupCreated,
  backupList,
  examples as copyEx,
  snapshotCreated,
  snapshotList,
} from "../wire/copy.ts";
import { examples as actionEx, pendingResult } from "../wire/machine-action.ts";
import { deleted } from "../wire/ssh-key.ts";
import { id, manage, viewServices } from "./machine-common.ts";

const snapshotAuth = (scope: "read" | "services") =>
  ({ scope, permissions: scope === "read" ? [...viewServices] : [...manage], module: "vps" }) as const;
const withCopy = z.object({ id: idParam, copyId: idParam });

/** A VPS's snapshots. */
export const snapshotRoutes = [
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
];

/** Provider backups, on the generic service routes. */
export const backupRoutes = [
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
