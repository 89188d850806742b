import type { JobRow } from "../driver.ts";
import type { MachineRow } from "../machines.ts";
import { backupPresent, copyName, createSteps, dropBackups, importStep, type Step } from "./backups.ts";
import { machineSteps } from "./build-steps.ts";
import type { LxdContext } from "./context.ts";
import { instance } from "./instance.ts";
import { passwordStep } from "./password.ts";
import { powerStep, suspendStep } from "./power.ts";
import type { Progress } from "./state.ts";
import { TRANSIENT_RETRIES } from "./transient.ts";

/** The steps of a job, given its remembered progress (placement, port). */
export function plan(d: LxdContext, job: JobRow, m: MachineRow, p: Progress, secret?: string): Step[] {
  const {
    c,
    name,
    url,
    status,
    state,
    forceStop,
    remove,
    create,
    identity,
    start,
    place,
    keepPlace,
    doneNow,
  } = machineSteps(d, job, m, p);

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
    case "snapshot_revert": {
      const restore: Step = {
        name: "restore",
        act: () => c.submit("PUT", url, { restore: copyName(job.copy_id ?? "") }),
      };
      return [
        forceStop,
        restore,
        {
          ...start,
          // A start after the restore failed in LXD (seen in CI under load: "Failed to handle
          // idmapped storage: Failed to change ownership of …", the restored files being moved to
          // the container's id range) may have left the files half moved: the snapshot is restored
          // again, whole, before the start is done again, a few times at most.
          async retry(err) {
            if (await start.retry?.(err)) return true;
            if ((p.transient_retries ?? 0) >= TRANSIENT_RETRIES) return false;
            p.transient_retries = (p.transient_retries ?? 0) + 1;
            await d.cfg.remember(job, p);
            // LXD stops the container itself after a failed start, and refuses others meanwhile.
            await doneNow([forceStop, restore], 60);
            return true;
          },
        },
      ];
    }
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
