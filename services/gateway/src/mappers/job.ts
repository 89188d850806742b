import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Job } from "@hb/contracts/hb/compute/v1/jobs_pb";
import type { z } from "zod";
import type { job } from "../wire/job.ts";
import { isoTime, jobStatuses } from "./compute-wire.ts";

/** An accepted action's job (GET /jobs/{id}, GET /jobs). */
export function jobJson(j: Job): z.infer<typeof job> {
  return {
    id: j.id,
    action: j.action,
    resource: { type: "service", id: j.serviceId, hostname: j.hostname },
    status: jobStatuses.name(j.status),
    progress: j.progress,
    started_at: isoTime(j.startedAt, "job started_at"),
    finished_at: j.finishedAt ? timestampDate(j.finishedAt).toISOString() : null,
    error: j.error ? { code: j.error.code, message: j.error.message } : null,
  };
}
