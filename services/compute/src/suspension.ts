import type { TxSql } from "@hb/platform";
import type { JobRow } from "./driver.ts";
import type { MachineRow } from "./machines.ts";

/** Accepts a job on a machine inside the caller's transaction (Jobs.accept). */
export type AcceptJob = (
  tx: TxSql,
  m: Pick<MachineRow, "service_id" | "customer_id" | "provider">,
  action: string,
  targetState: string,
) => Promise<JobRow>;

/**
 * Brings the machines of these services in line with their service's billing status: a suspended
 * service's machine is stopped (a `suspend` job), and once the service is active again it is
 * started (an `unsuspend` job) only if it was running when the suspension began. What it was doing
 * is kept in machines.state_before_suspension. A machine with a job running is left alone: the job
 * loop calls this again when that job ends (a build finishing during a suspension is then stopped,
 * an unsuspension that came while the stop was running starts it again). Runs in the caller's
 * transaction; answers the accepted jobs, which the caller launches once it has committed.
 */
export async function settleSuspensions(
  tx: TxSql,
  accept: AcceptJob,
  serviceIds: string[],
): Promise<JobRow[]> {
  if (serviceIds.length === 0) return [];
  // A machine being built or rebuilt will be running when its job ends; a paused one is running
  // as far as the customer is concerned. Recorded once: a repeated suspension keeps the first word.
  await tx`update machines m set state_before_suspension = coalesce(m.state_before_suspension,
      case when m.state in ('running', 'paused', 'creating') then 'running' else m.state end)
    where m.service_id = any(${serviceIds}::uuid[]) and m.service_status = 'suspended'
      and (m.has_instance or m.state = 'creating')`;
  const rows = await tx<(MachineRow & { busy: boolean })[]>`
    select m.*, exists (select 1 from jobs j where j.service_id = m.service_id and j.status = 'running') as busy
    from machines m
    where m.service_id = any(${serviceIds}::uuid[])
      and (m.service_status = 'suspended' or m.state_before_suspension is not null)`;
  const accepted: JobRow[] = [];
  const settled: string[] = [];
  for (const m of rows) {
    if (m.busy) continue;
    if (m.service_status === "suspended") {
      if (m.has_instance && (m.state === "running" || m.state === "paused"))
        accepted.push(await accept(tx, m, "suspend", "stopped"));
      continue;
    }
    // Active again (or terminated): the recorded state is acted on once, then forgotten.
    settled.push(m.service_id);
    if (
      m.service_status === "active" &&
      m.has_instance &&
      m.state_before_suspension === "running" &&
      m.state === "stopped"
    )
      accepted.push(await accept(tx, m, "unsuspend", "running"));
  }
  if (settled.length > 0)
    await tx`update machines set state_before_suspension = null where service_id = any(${settled}::uuid[])`;
  return accepted;
}
