import { z } from "zod";
import { INSTANCE_STATES, machineStats } from "./machine.ts";

const jobId = z.uuid().describe("The job: GET /jobs/{id}. A job id means accepted, not finished");

/** Accepted and still running: poll the job or the resource, do not repeat the call. */
export const pendingResult = z.object({
  completed: z.literal(false),
  job_id: jobId,
  pending: z.literal(true),
});

/**
 * The spec's power action result: completed with the state reached (and the job's status), or
 * accepted and still running (pending).
 */
export const powerResult = z.union([
  z.object({
    completed: z.literal(true),
    job_id: jobId,
    state: z.enum(INSTANCE_STATES).describe("The state the machine reached"),
    status: z.literal("succeeded").describe("The job's status"),
  }),
  pendingResult,
]);

/** The dispatcher's `status` action: the machine's state now, no job. */
export const statusResult = z.object({
  completed: z.literal(true),
  state: z.enum(INSTANCE_STATES),
  status: z.enum(INSTANCE_STATES).describe("The same as state"),
});

/** POST /services/{id}/actions/{action}: a power action, or the `status` and `stats` reads. */
export const dispatchResult = z.union([powerResult, statusResult, machineStats]);

/** Reinstall accepted: always asynchronous. */
export const reinstallResult = pendingResult.extend({ message: z.string() });

/** Password reset accepted; a rebuilt dedicated server answers its generated password once. */
export const passwordResult = pendingResult.extend({
  password: z
    .string()
    .optional()
    .describe("Dedicated servers only: the generated root password, shown in this answer only"),
});

const JOB = "0193a5d4-2f6e-7b1a-8c3d-4e5f6a7b8c9d";
export const examples = {
  power: { completed: true, job_id: JOB, state: "running" as const, status: "succeeded" as const },
  pending: { completed: false as const, job_id: JOB, pending: true as const },
  reinstall: {
    completed: false as const,
    job_id: JOB,
    pending: true as const,
    message: "Reinstall started; the disk is being erased",
  },
  password: { completed: false as const, job_id: JOB, pending: true as const },
  dedicatedPassword: {
    completed: false as const,
    job_id: JOB,
    pending: true as const,
    password: "q3V9xK2mWb7LtR4e",
  },
};
