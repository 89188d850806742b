import { z } from "zod";
import { pagination, paginationExample } from "./pagination.ts";
import { JOB_STATUS_WORDS } from "./words.ts";

export const JOB_STATUSES = JOB_STATUS_WORDS;

/** An accepted action's job (GET /jobs/{id}); kept 30 days after it finishes. */
export const job = z.object({
  id: z.uuid(),
  action: z
    .string()
    .describe("build, reinstall, password, a power action, snapshot_create, backup_restore, ..."),
  resource: z.object({
    type: z.literal("service"),
    id: z.uuid(),
    hostname: z.string().describe("The service's machine's hostname, so a list can name it"),
  }),
  status: z.enum(JOB_STATUSES),
  progress: z.int().min(0).max(100),
  started_at: z.iso.datetime(),
  finished_at: z.iso.datetime().nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable().describe("Set when the job failed"),
});

export const jobExample = {
  id: "0193a5d4-2f6e-7b1a-8c3d-4e5f6a7b8c9d",
  action: "reboot",
  resource: {
    type: "service" as const,
    id: "0193a5c2-7d1e-7c4a-9f3b-2e8d6a1b4c5d",
    hostname: "web-1.example.com",
  },
  status: "succeeded" as const,
  progress: 100,
  started_at: "2026-11-23T10:00:00.000Z",
  finished_at: "2026-11-23T10:00:04.000Z",
  error: null,
};

/** GET /jobs: one page of the customer's jobs, newest first, with the pagination inside data. */
export const jobList = z.object({ jobs: z.array(job), pagination });

export const jobListExample = {
  jobs: [
    {
      ...jobExample,
      id: "0193a5d6-1b2c-7d3e-8f4a-5b6c7d8e9f0a",
      action: "reinstall",
      status: "running" as const,
      progress: 40,
      started_at: "2026-11-23T10:05:00.000Z",
      finished_at: null,
    },
    {
      ...jobExample,
      id: "0193a5d5-0a1b-7c2d-9e3f-4a5b6c7d8e9f",
      action: "poweroff",
      status: "failed" as const,
      started_at: "2026-11-23T10:02:00.000Z",
      finished_at: "2026-11-23T10:02:01.000Z",
      error: {
        code: "PROVIDER_ERROR",
        message: "The server's management controller did not complete the power action",
      },
    },
    jobExample,
  ],
  pagination: { ...paginationExample, total: 3 },
};
