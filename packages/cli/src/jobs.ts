import { type ListItem, queryChoices } from "@hosting-platform/sdk";
import { type Command, Option } from "commander";
import { failIfFailed, waitForJobShown, waitOptions } from "./progress.ts";
import type { Runtime } from "./runtime.ts";

type Job = ListItem<"/jobs">;

export function registerJobs(program: Command, rt: Runtime): void {
  const jobs = program.command("jobs").description("Accepted asynchronous actions and their progress");

  jobs
    .command("list")
    .description("the account's jobs, newest first (all pages)")
    .addOption(new Option("--state <state>", "only jobs in this state").choices(queryChoices["/jobs"].state))
    .option("--resource <serviceId>", "only the jobs of this service")
    .option("--action <action>", "only this action (reboot, build, reinstall, ...)")
    .action(
      async (
        opts: { state?: (typeof queryChoices)["/jobs"]["state"][number]; resource?: string; action?: string },
        cmd: Command,
      ) => {
        const hb = await rt.client(cmd);
        const rows: Job[] = [];
        for await (const j of hb.paginate("/jobs", opts)) rows.push(j);
        rt.print(cmd).list(rows, [
          { header: "ID", value: (j) => j.id },
          { header: "ACTION", value: (j) => j.action },
          { header: "SERVICE", value: (j) => j.resource.id },
          { header: "STATUS", value: (j) => j.status },
          { header: "PROGRESS", value: (j) => `${j.progress}%` },
          { header: "STARTED", value: (j) => j.started_at },
          { header: "ERROR", value: (j) => (j.error ? `${j.error.code}: ${j.error.message}` : "") },
        ]);
      },
    );

  jobs
    .command("show")
    .description("one job: status, progress, times and any error")
    .argument("<jobId>", "the job id (job_id of an action's answer)")
    .action(async (jobId: string, _opts, cmd: Command) => {
      const hb = await rt.client(cmd);
      const { data } = await hb.get("/jobs/{id}", { params: { path: { id: jobId } } });
      rt.print(cmd).record(data);
    });

  jobs
    .command("wait")
    .description("wait for a job to finish, showing its progress; exit 3 if it failed, 4 on timeout")
    .argument("<jobId>", "the job id")
    .option("--timeout <seconds>", "give up after this long", "600")
    .action(async (jobId: string, opts: { timeout: string }, cmd: Command) => {
      const hb = await rt.client(cmd);
      const job = await waitForJobShown(rt, hb, jobId, waitOptions(opts.timeout));
      rt.print(cmd).record(job);
      failIfFailed(job);
    });
}
