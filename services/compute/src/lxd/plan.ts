import type { JobRow } from "../driver.ts";
import type { MachineRow } from "../machines.ts";
import { backupPresent, copyName, createSteps, dropBackups, importStep, type Step } from "./backups.ts";
import { machineSteps } from "./build-steps.ts";
import type { LxdContext } from "./context.ts";
import { instance } from "./instance.ts";
import { passwordStep } from "./password.ts";
import { powerStep, suspendStep } from "./power.ts";
import type { Progress } from "./state.ts";

/** The steps of a job, given its remembered progress (placement, port). */
export function plan(d: LxdContext, job: JobRow, m: MachineRow, p: Progress, secret?: string): Step[] {
  const { c, name, url, status, state, forceStop, remove, create, identity, start, place, keepPlace } =
    machineSteps(d, job, m, p);

  switch (job.action) {
    case "build":
      return [place, create, identity, start];
    case "reinstall":
      // A password given with the reinstall is set once the new system runs.
      return [
        keepPlace,
        forceStop,
        remove,
        create,
        identity,
        start,
        ...(secret ? [passwordStep(c, url, m, secret)] : []),
      ];
    case "terminate":
      return [forceStop, remove, dropBackups(d.cfg.backupDir, m.service_id)];
    case "password":
      return [passwordStep(c, url, m, secret)];
    case "snapshot_create":
    case "backup_create":
      return createSteps(d.copyContext(c, job, m));
    case "snapshot_revert":
      return [
        forceStop,
        { name: "restore", act: () => c.submit("PUT", url, { restore: copyName(job.copy_id ?? "") }) },
        start,
      ];
    case "backup_restore":
      return [
        backupPresent(d.copyContext(c, job, m)),
        keepPlace,
        forceStop,
        remove,
        importStep(
          d.copyContext(c, job, m),
          p.member ? `?target=${encodeURIComponent(p.member)}` : "",
          () => d.poolOf(c),
          async () => Boolean(await instance(c, name)),
        ),
        start,
      ];
    case "suspend":
      return [suspendStep(name, status, state, p)];
    case "unsuspend":
      return [powerStep("start", name, status, state)];
    default:
      return [powerStep(job.action, name, status, state)];
  }
}
