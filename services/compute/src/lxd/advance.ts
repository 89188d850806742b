import type { JobOutcome, JobRow } from "../driver.ts";
import type { MachineRow } from "../machines.ts";
import { DEFAULT_COPY_DEADLINE_MS, isCopyJob, JobFailure, removeCopy } from "./backups.ts";
import { type LxdClient, LxdError } from "./client.ts";
import type { LxdContext } from "./context.ts";
import { instanceName } from "./instance.ts";
import { cleanUp, failure, finished, instanceGone } from "./outcome.ts";
import { plan } from "./plan.ts";
import type { Progress } from "./state.ts";
import { anotherTry, instanceBusy, shutdownFailedEarly, transientLxdFailure } from "./transient.ts";

/**
 * How long a step LXD refuses because the instance is busy is asked again. LXD 5.0 holds an
 * instance's operation lock up to 30 s without activity, and renews it while the operation works.
 */
const BUSY_PATIENCE_MS = 120_000;

/**
 * Whether a step LXD refused or failed because the instance is busy may be asked again: true, and
 * the first refusal's time kept, until BUSY_PATIENCE_MS have passed since then.
 */
function stillPatient(p: Progress): boolean {
  const since = p.busy_since ?? Date.now();
  if (Date.now() - since >= BUSY_PATIENCE_MS) return false;
  p.busy_since = since;
  return true;
}

/**
 * Advances a job: checks the operation it waits on, then runs its steps until one starts an
 * operation (the job stays running, the operation remembered) or all are done (the outcome).
 */
export async function advance(
  d: LxdContext,
  job: JobRow,
  m: MachineRow,
  secret?: string,
): Promise<JobOutcome | undefined> {
  const p: Progress = { ...(job.driver_state as Progress) };
  let i = p.step ?? 0;
  try {
    const steps = plan(d, job, m, p, secret);
    if (p.op) {
      const c = d.clientOf(p.endpoint ?? d.machineState(m).endpoint);
      if (
        isCopyJob(job.action) &&
        Date.now() - (p.started_at ?? Date.now()) > (d.cfg.copyDeadlineMs ?? DEFAULT_COPY_DEADLINE_MS)
      )
        throw new JobFailure(`LXD did not finish the ${job.action.split("_")[0]} in time; it was given up`);
      let op: Awaited<ReturnType<LxdClient["operation"]>> | undefined;
      try {
        op = await c.operation(p.op);
      } catch (err) {
        if (!(err instanceof LxdError && err.status === 404)) throw err;
      }
      if (op && (op.status === "Running" || op.status === "Pending")) {
        if (p.unreachable_since) {
          p.unreachable_since = undefined;
          await d.cfg.remember(job, p);
        }
        return undefined;
      }
      if (op && op.status !== "Success") {
        const err = op.err || op.status;
        const again = await steps[i]?.retry?.(err);
        const from = typeof again === "string" ? steps.findIndex((s) => s.name === again) : -1;
        if (again === true) {
          // The step fixed the cause: it runs again below.
          i -= 1;
        } else if (from >= 0) {
          // The job goes back to an earlier step and runs on from there below.
          i = from - 1;
        } else if (instanceBusy(err) && stillPatient(p)) {
          // LXD took the step, then failed its operation because another one holds the instance
          // ("Failed to create instance delete operation: Instance is busy running a "stop"
          // operation": a build's delete after a failed start, while LXD's own stop still ran; CI):
          // the step is asked again at the next tick, as a refused request is below.
          p.step = i;
          p.op = undefined;
          await d.cfg.remember(job, p);
          return undefined;
        } else if (
          (transientLxdFailure(err) || shutdownFailedEarly(err, Date.now() - (p.op_at ?? 0))) &&
          anotherTry(p)
        ) {
          // LXD failed the operation in passing, as it fails a request (a revert's start whose
          // forkstart helper was not reachable, a clean shutdown liblxc gave up on at once): the
          // step runs again at the next tick.
          p.step = i;
          p.op = undefined;
          await d.cfg.remember(job, p);
          return undefined;
        } else throw new JobFailure(`LXD: ${err}`);
      }
      if (op && steps[i]?.name === "password" && op.metadata && op.metadata.return !== 0) {
        throw new JobFailure("The password could not be set inside the machine");
      }
      // An operation LXD no longer knows (its daemon restarted): the step's effect decides.
      const redo = !op && steps[i]?.done && !(await steps[i].done?.());
      p.op = undefined;
      if (!redo) {
        i += 1;
        p.busy_since = undefined;
      }
    }
    for (; i < steps.length; i++) {
      const opId = await steps[i].act();
      if (!opId) {
        p.busy_since = undefined;
      } else {
        // A step whose operation LXD may still fail busy keeps counting its patience until it is done.
        p.step = i;
        p.op = opId;
        p.op_at = Date.now();
        p.started_at ??= Date.now();
        p.unreachable_since = undefined;
        await d.cfg.remember(job, p);
        return undefined;
      }
    }
    return await finished(d, job, m, p);
  } catch (err) {
    if (err instanceof LxdError && err.status !== 0 && transientLxdFailure(err.message) && anotherTry(p)) {
      // The step that failed runs again at the next tick (every step's act can be done twice).
      p.step = i;
      p.op = undefined;
      await d.cfg.remember(job, p);
      return undefined;
    }
    if (err instanceof LxdError && instanceBusy(err.message) && stillPatient(p)) {
      // LXD refused the step while another operation holds the instance (its own stop after a
      // failed start, seen in CI): the step is asked again at the next tick, for a while.
      p.step = i;
      p.op = undefined;
      await d.cfg.remember(job, p);
      return undefined;
    }
    if (err instanceof LxdError && err.status === 0) {
      // The daemon does not answer: the job waits for it, up to a limit.
      const since = p.unreachable_since ?? Date.now();
      if (Date.now() - since < d.cfg.unreachableFailMs) {
        if (!p.unreachable_since) {
          p.unreachable_since = since;
          await d.cfg.remember(job, p);
        }
        return undefined;
      }
      return failure(job, m, "The LXD host did not answer; the job was given up");
    }
    const message =
      err instanceof JobFailure
        ? err.message
        : err instanceof LxdError
          ? err.status === 404 && job.action !== "build"
            ? `The machine's container ${instanceName(m.service_id)} no longer exists`
            : `LXD: ${err.message}`
          : "The LXD driver failed";
    if (job.action === "build") await cleanUp(d, m, p);
    if (job.copy_id && (job.action === "snapshot_create" || job.action === "backup_create")) {
      // A copy that failed leaves nothing behind: an LXD snapshot or backup, a partial export.
      const c = d.clientOf(p.endpoint ?? d.machineState(m).endpoint);
      await removeCopy(
        d.copyPlace(c, m),
        job.action === "snapshot_create" ? "snapshot" : "backup",
        job.copy_id,
        p.op,
      ).catch(() => undefined);
    }
    // A rebuild that failed after removing the old instance leaves the machine without one.
    return failure(job, m, message, job.action !== "build" && (await instanceGone(d, m, p)));
  }
}
