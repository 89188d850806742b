/**
 * What a job's outcome does to the rows (inside the transaction that records it, jobs.ts): a
 * failure fails the job (and a build's event says so), and settles the machine and the copy it
 * worked on; a success records what the provider built or changed on the machine, marks the copy
 * available with its measured size, and, for a build, sends the machine.provisioned event with the
 * machine's addresses.
 */
import { type TxSql, writeOutbox } from "@hb/platform";
import type { JobOutcome, JobRow } from "./driver.ts";
import { type IpRow, ipsOf, type MachineRow } from "./machines.ts";

/** Records `outcome` on the job and its machine; the caller holds both rows locked and the job's lease. */
export async function applyOutcome(tx: TxSql, ns: string, job: JobRow, m: MachineRow, outcome: JobOutcome) {
  if (!outcome.ok) {
    await Promise.all([
      failedMachine(tx, job, m, outcome)?.execute(),
      tx`update jobs set status = 'failed', progress = 100, finished_at = clock_timestamp(), claim = null,
        lease_until = null, error_code = ${outcome.code}, error_message = ${outcome.message} where id = ${job.id}`.execute(),
      job.action === "build" ? machineEvent(tx, ns, m, false, outcome.message, []) : undefined,
      job.copy_id ? failedCopy(tx, job).execute() : undefined,
    ]);
    return;
  }
  const changes: Promise<unknown>[] = [];
  if (outcome.built) {
    for (const ip of outcome.addresses ?? []) {
      changes.push(
        tx`insert into ip_addresses (service_id, address, version, prefix_length, purpose)
          values (${m.service_id}, ${ip.address}, ${ip.version}, ${ip.prefix_length}, ${ip.purpose}) on conflict do nothing`.execute(),
      );
    }
    changes.push(tx`update machines set has_instance = true where service_id = ${m.service_id}`.execute());
  }
  // Creating a copy leaves the machine as it was; reverting or restoring brings it back up.
  if (job.copy_id)
    changes.push(
      tx`update copies set status = 'available', size_gb = coalesce(${outcome.copySizeGb ?? null}::int, size_gb)
        where id = ${job.copy_id}`.execute(),
    );
  if (outcome.snapshotsLost)
    changes.push(
      tx`update copies set status = 'deleted' where service_id = ${m.service_id}
        and collection = 'snapshot' and status <> 'deleted'`.execute(),
    );
  // A job that succeeded found the instance there (a rebuild made it again): no longer lost.
  if (m.lost_at)
    changes.push(tx`update machines set lost_at = null where service_id = ${m.service_id}`.execute());
  if (outcome.sshPort)
    changes.push(
      tx`update machines set ssh_port = ${outcome.sshPort} where service_id = ${m.service_id}`.execute(),
    );
  if (outcome.driverState)
    changes.push(
      tx`update machines set driver_state = driver_state || ${JSON.stringify(outcome.driverState)}::text::jsonb
        where service_id = ${m.service_id}`.execute(),
    );
  if (outcome.state)
    changes.push(
      tx`update machines set state = ${outcome.state} where service_id = ${m.service_id}`.execute(),
    );
  // The event names the machine's addresses as they stand after the inserts above.
  const ips = job.action === "build" ? ipsOf(tx, m.service_id).execute() : undefined;
  // Awaited together: a statement that fails leaves no other's rejection unhandled.
  const [addresses] = await Promise.all([ips, ...changes]);
  await Promise.all([
    addresses ? machineEvent(tx, ns, m, true, "", addresses) : undefined,
    tx`update jobs set status = 'succeeded', progress = 100, finished_at = clock_timestamp(), claim = null,
      lease_until = null where id = ${job.id}`.execute(),
  ]);
}

/**
 * The machine after a failed job: lost when the provider found its instance gone without the job
 * removing it (it keeps its instance record); without an instance when the job destroyed it. A rebuild
 * (restore, revert, reinstall) that failed with the instance kept leaves it in a state no job
 * knows: `error` lets the provider's reconcile pass record the real one (the pass leaves
 * `creating` machines alone, so one stayed `creating` for ever).
 */
function failedMachine(tx: TxSql, job: JobRow, m: MachineRow, outcome: JobOutcome & { ok: false }) {
  if (outcome.lost)
    return tx`update machines set state = 'error', lost_at = coalesce(lost_at, clock_timestamp())
      where service_id = ${m.service_id}`;
  if (outcome.destroyed)
    return tx`update machines set state = 'error', has_instance = false where service_id = ${m.service_id}`;
  if (m.state === "creating" && job.action !== "build")
    return tx`update machines set state = 'error' where service_id = ${m.service_id}`;
  return undefined;
}

/**
 * A copy whose job failed: one being made leaves the list (the driver removed what it left; the
 * failed job is the record), one being restored is available again to retry.
 */
const failedCopy = (tx: TxSql, job: JobRow) =>
  job.action.endsWith("_create")
    ? tx`update copies set status = 'deleted' where id = ${job.copy_id} and status = 'creating'`
    : tx`update copies set status = 'available' where id = ${job.copy_id} and status = 'restoring'`;

async function machineEvent(
  tx: TxSql,
  ns: string,
  m: MachineRow,
  success: boolean,
  error: string,
  ips: IpRow[],
) {
  await writeOutbox(tx, ns, {
    type: success ? "machine.provisioned" : "machine.provisioning_failed",
    payload: {
      case: "machine",
      value: {
        serviceId: m.service_id,
        customerId: m.customer_id,
        success,
        serverIp: (ips.find((i) => i.version === 4) ?? ips[0])?.address ?? "",
        hostname: m.hostname,
        error,
      },
    },
  });
}
