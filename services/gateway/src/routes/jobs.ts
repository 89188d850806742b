import { JobStatus } from "@hb/contracts/hb/compute/v1/jobs_pb";
import { PAGE_SIZE } from "@hb/platform/paging";
import { z } from "zod";
import { jobStatuses } from "../mappers/compute-wire.ts";
import { jobJson } from "../mappers/job.ts";
import { route } from "../route.ts";
import { idParam, pageQuery, pagination } from "../schemas.ts";
import { JOB_STATUSES, job, jobExample, jobList, jobListExample } from "../wire/job.ts";
import { id, required, viewServices } from "./machine-common.ts";

export const jobRoutes = [
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
