import type { JobOutcome } from "../driver.ts";
import type { MachineRow } from "../machines.ts";

/** The jobs that remove the machine's instance themselves (before making it again, or for good). */
const REMOVES_INSTANCE = new Set(["reinstall", "backup_restore", "terminate"]);

/**
 * What a failed job whose instance is gone says of the machine (issue 30). A job that removes the
 * instance itself and failed after that destroyed it. Any other job found it deleted behind the
 * platform's back: the machine is lost (compute keeps its record, reads `error`, and takes only a
 * rebuild), and so is one already lost whose rebuild failed, so that it can be tried again.
 */
export const goneOutcome = (
  action: string,
  m: MachineRow,
): Pick<JobOutcome & { ok: false }, "destroyed" | "lost"> =>
  REMOVES_INSTANCE.has(action) && !m.lost_at ? { destroyed: true } : { lost: true };
