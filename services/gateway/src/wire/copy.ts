import { z } from "zod";
import { pendingResult } from "./machine-action.ts";
import { COPY_STATUS_WORDS } from "./words.ts";

/** A snapshot (VPS) or a provider backup (any service): the same record in two collections. */
export const copy = z.object({
  id: z.uuid(),
  name: z.string(),
  status: z.enum(COPY_STATUS_WORDS),
  size_gb: z.int().meta({
    description:
      "its size as the provider measured it, in whole GB rounded up; 0 while it is being made or where the provider cannot measure it",
  }),
  created_at: z.iso.datetime(),
});

export const snapshotList = z.object({ snapshots: z.array(copy) });
export const backupList = z.object({ backups: z.array(copy) });

/** Creating one is a job; the answer names the new copy, still being made. */
const created = copy.pick({ id: true, name: true }).extend({ status: z.literal("creating") });
export const snapshotCreated = pendingResult.extend({ snapshot: created });
export const backupCreated = pendingResult.extend({ backup: created });

const JOB = "0193a5d4-2f6e-7b1a-8c3d-4e5f6a7b8c9d";
const one = {
  id: "0193a5f0-6c7d-7e8f-9a0b-1c2d3e4f5a6b",
  name: "before-upgrade",
  status: "available" as const,
  size_gb: 20,
  created_at: "2026-11-23T10:00:00.000Z",
};
const pending = { completed: false as const, job_id: JOB, pending: true as const };
export const examples = {
  snapshotList: { snapshots: [one] },
  backupList: { backups: [{ ...one, name: "backup-2026-11-23T10:00:00" }] },
  snapshotCreated: { ...pending, snapshot: { id: one.id, name: one.name, status: "creating" as const } },
  backupCreated: {
    ...pending,
    backup: { id: one.id, name: "backup-2026-11-23T10:00:00", status: "creating" as const },
  },
};
