import type { z } from "zod";
import type { provisionStatus } from "../../wire/machine.ts";

const STATE: Record<string, string> = {
  creating: "Being built",
  running: "Running",
  stopped: "Stopped",
  paused: "Paused",
  error: "In error",
};
const JOB: Record<string, string> = { running: "in progress", succeeded: "finished", failed: "failed" };

/** A dedicated server's provisioning status as a sentence: "Being built: the build is in progress, 40% done." */
export function provisionWords(p: z.infer<typeof provisionStatus>): string {
  const state = STATE[p.state] ?? p.state;
  if (!p.job) return `${state}; no build or reinstall has run.`;
  const what = p.job.action === "build" ? "the build" : "the latest reinstall";
  const done = p.job.status === "running" ? `, ${p.job.progress}% done` : "";
  return `${state}; ${what} ${p.job.status === "running" ? "is" : "has"} ${JOB[p.job.status] ?? p.job.status}${done}.`;
}
