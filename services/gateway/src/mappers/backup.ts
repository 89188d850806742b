import type { CreateBackupResponse } from "@hb/contracts/hb/compute/v1/compute_pb";
import type { Backup } from "@hb/contracts/hb/compute/v1/copies_pb";
import type { z } from "zod";
import type { backupCreated, copy } from "../wire/copy.ts";
import { copyStatuses, isoTime } from "./compute-wire.ts";
import { pendingJson } from "./machine-action.ts";

export const backupJson = (b: Backup): z.infer<typeof copy> => ({
  id: b.id,
  name: b.name,
  status: copyStatuses.name(b.status),
  size_gb: b.sizeGb,
  created_at: isoTime(b.createdAt, "backup created_at"),
});

/** POST /services/{id}/backups: the job, and the backup it is making. */
export function backupCreatedJson(r: CreateBackupResponse): z.infer<typeof backupCreated> {
  if (!r.backup) throw new Error("compute answered CreateBackup without the backup");
  return { ...pendingJson(r.jobId), backup: { id: r.backup.id, name: r.backup.name, status: "creating" } };
}
