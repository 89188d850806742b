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
  const s = machineSteps(d, job, m, p);
  const { c, name, url, status, state } = s;

  switch (job.action) {
    case "build":
      // The stop and the delete do nothing on a first pass (there is no instance yet): they are
      // where a failed start makes the container again from (startNew).
      return [s.place, s.forceStop, s.remove, s.create, s.identity, s.startNew];
    case "reinstall":
      // A password given with the reinstall is set once the new system runs.
      return [
        s.keepPlace,
        s.forceStop,
        s.remove,
        s.create,
        s.identity,
        s.startNew,
        ...(secret ? [passwordStep(c, url, m, secret)] : []),
      ];
    case "terminate":
      return [s.forceStop, s.remove, dropBackups(d.cfg.backupDir, m.service_id)];
    case "password":
      return [passwordStep(c, url, m, secret)];
    case "snapshot_create":
    case "backup_create":
      return createSteps(d.copyContext(c, job, m));
    case "snapshot_revert": {
      const restore: Step = {
        name: "restore",
        act: () => c.submit("PUT", url, { restore: copyName(job.copy_id ?? "") }),
      };
      // A start that fails after the restore may have left the files half moved to the
      // container's id range: the snapshot is restored again, whole, before the start.
      return [s.forceStop, restore, s.startAfter(s.forceStop.name)];
    }
    case "backup_restore":
      return [
        backupPresent(d.copyContext(c, job, m)),
        s.keepPlace,
        s.forceStop,
        s.remove,
        importStep(
          d.copyContext(c, job, m),
          p.member ? `?target=${encodeURIComponent(p.member)}` : "",
          () => d.poolOf(c),
          async () => Boolean(await instance(c, name)),
        ),
        s.start,
      ];
    case "suspend":
      return [suspendStep(name, status, state, p)];
    case "unsuspend":
      return [powerStep("start", name, status, state, p)];
    default:
      return [powerStep(job.action, name, status, state, p)];
  }
}
