import type { HbClient, Job } from "@hosting-platform/sdk";
import { CliExit, type Runtime } from "./runtime.ts";

const bar = (progress: number, width = 20) => {
  const filled = Math.round((Math.max(0, Math.min(100, progress)) / 100) * width);
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}]`;
};

/** A progress line for a job: redrawn in place on a terminal, one line per change elsewhere. */
export function progressReporter(rt: Runtime, label: string) {
  let drawn = false;
  return {
    update(job: Job) {
      const line = `${label} ${job.action} ${bar(job.progress)} ${String(job.progress).padStart(3)}% ${job.status}`;
      if (rt.errIsTTY) {
        rt.err(`\r\x1b[2K${line}`);
        drawn = true;
      } else rt.err(`${line}\n`);
    },
    done() {
      if (drawn) rt.err("\n");
      drawn = false;
    },
  };
}

export const waitOptions = (timeoutSeconds: string) => {
  const s = Number(timeoutSeconds);
  if (!Number.isFinite(s) || s <= 0)
    throw new CliExit(2, `--timeout takes seconds; "${timeoutSeconds}" is not`);
  return s * 1000;
};

/** Waits for a job with a progress display; a failed job ends the command with status 3. */
export async function waitForJobShown(
  rt: Runtime,
  hb: HbClient,
  jobId: string,
  timeoutMs: number,
): Promise<Job> {
  const progress = progressReporter(rt, `job ${jobId.slice(0, 8)}`);
  let job: Job;
  try {
    job = await hb.waitForJob(jobId, { timeoutMs, intervalMs: 500, onProgress: (j) => progress.update(j) });
  } finally {
    progress.done();
  }
  return job;
}

/** After the job is printed: its failure becomes the exit status. */
export function failIfFailed(job: Job): void {
  if (job.status === "failed") {
    const why = job.error ? `${job.error.code}: ${job.error.message}` : "no reason given";
    throw new CliExit(3, `job ${job.id} (${job.action}) failed: ${why}`);
  }
}
