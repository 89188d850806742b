import type { CreateSnapshotResponse } from "@hb/contracts/hb/compute/v1/compute_pb";
import type { Snapshot } from "@hb/contracts/hb/compute/v1/copies_pb";
import type { z } from "zod";
import type { copy, snapshotCreated } from "../wire/copy.ts";
import { copyStatuses, isoTime } from "./compute-wire.ts";
import { pendingJson } from "./machine-action.ts";

export const snapshotJson = (s: Snapshot): z.infer<typeof copy> => ({
  id: s.id,
  name: s.name,
  status: copyStatuses.name(s.status),
  size_gb: s.sizeGb,
  created_at: isoTime(s.createdAt, "snapshot created_at"),
});

/** POST /vps/{id}/snapshots: the job, and the snapshot it is making. */
export function snapshotCreatedJson(r: CreateSnapshotResponse): z.infer<typeof snapshotCreated> {
  if (!r.snapshot) throw new Error("compute answered CreateSnapshot without the snapshot");
  return {
    ...pendingJson(r.jobId),
    snapshot: { id: r.snapshot.id, name: r.snapshot.name, status: "creating" },
  };
}
