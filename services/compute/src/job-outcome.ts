/**
 * What a job's outcome does to the rows (inside the transaction that records it, jobs.ts): a
 * failure fails the job (and a build's event says so), and settles the machine and the copy it
 * worked on; a success records what the provider built or changed on the machine, marks the copy
 * available with its measured size, and, for a build, sends the machine.provisioned event with the
 * machine's addresses.
 */
import { type EventInit, type TxSql, writeOutbox, writeOutboxBatch } from "@hb/platform";
import type { JobOutcome, JobRow } from "./driver.ts";
import type { IpRow, MachineRow } from "./machines.ts";

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
  // What only some successes change, sent before (and so in the same round trip as) what every
  // success changes (applySuccesses).
  const extras: Promise<unknown>[] = [];
  // Creating a copy leaves the machine as it was; reverting or restoring brings it back up.
  if (job.copy_id)
    extras.push(
      tx`update copies set status = 'available', size_gb = coalesce(${outcome.copySizeGb ?? null}::int, size_gb)
        where id = ${job.copy_id}`.execute(),
    );
  if (outcome.snapshotsLost)
    extras.push(
      tx`update copies set status = 'deleted' where service_id = ${m.service_id}
        and collection = 'snapshot' and status <> 'deleted'`.execute(),
    );
  // A job that succeeded found the instance there (a rebuild made it again): no longer lost.
  if (m.lost_at)
    extras.push(tx`update machines set lost_at = null where service_id = ${m.service_id}`.execute());
  if (outcome.sshPort)
    extras.push(
      tx`update machines set ssh_port = ${outcome.sshPort} where service_id = ${m.service_id}`.execute(),
    );
  if (outcome.driverState)
    extras.push(
      tx`update machines set driver_state = driver_state || ${JSON.stringify(outcome.driverState)}::text::jsonb
        where service_id = ${m.service_id}`.execute(),
    );
  // Awaited together: a statement that fails leaves no other's rejection unhandled.
  await Promise.all([...extras, applySuccesses(tx, ns, [{ job, m, outcome }])]);
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

function machineEvent(tx: TxSql, ns: string, m: MachineRow, success: boolean, error: string, ips: IpRow[]) {
  return writeOutbox(tx, ns, machineEventInit(m, success, error, ips));
}

function machineEventInit(m: MachineRow, success: boolean, error: string, ips: IpRow[]): EventInit {
  return {
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
  };
}

export type Success = Extract<JobOutcome, { ok: true }>;

/**
 * Whether `outcome` of `job` is plain: a success on no copy, with nothing for the driver's state,
 * the SSH port or the snapshots, so that applySuccesses records all of it (for many jobs at once).
 */
export const isPlain = (job: JobRow, outcome: JobOutcome | undefined): outcome is Success =>
  outcome?.ok === true &&
  !job.copy_id &&
  outcome.copySizeGb == null &&
  !outcome.snapshotsLost &&
  outcome.sshPort == null &&
  outcome.driverState == null;

/**
 * What every success changes, for one job or many, set-wise: one statement each for the addresses,
 * the machines' instance and state, the builds' addresses read back, their events and the jobs,
 * whatever their number. A plain success (isPlain) changes nothing else; applyOutcome adds the
 * rest of any other. The caller holds every job's lease and every machine's lock; for more than
 * one job it has left out machines that are lost or concerned by the suspension rule.
 */
export async function applySuccesses(
  tx: TxSql,
  ns: string,
  items: { job: JobRow; m: MachineRow; outcome: Success }[],
) {
  const addresses = items.flatMap(({ m, outcome }) =>
    outcome.built ? (outcome.addresses ?? []).map((ip) => ({ serviceId: m.service_id, ...ip })) : [],
  );
  const changed = items.filter(({ outcome }) => outcome.built || outcome.state);
  const builds = items.filter(({ job }) => job.action === "build");
  const changes: Promise<unknown>[] = [];
  if (addresses.length > 0)
    changes.push(
      tx`insert into ip_addresses (service_id, address, version, prefix_length, purpose)
        select * from unnest(${addresses.map((a) => a.serviceId)}::uuid[], ${addresses.map((a) => a.address)}::text[],
          ${addresses.map((a) => a.version)}::int[], ${addresses.map((a) => a.prefix_length)}::int[],
          ${addresses.map((a) => a.purpose)}::text[])
        on conflict do nothing`.execute(),
    );
  if (changed.length > 0)
    changes.push(
      tx`update machines m set has_instance = m.has_instance or v.built,
          state = coalesce(nullif(v.state, ''), m.state)
        from unnest(${changed.map(({ m }) => m.service_id)}::uuid[],
          ${changed.map(({ outcome }) => String(Boolean(outcome.built)))}::text[]::bool[],
          ${changed.map(({ outcome }) => outcome.state ?? "")}::text[]) as v(service_id, built, state)
        where m.service_id = v.service_id`.execute(),
    );
  // The events name the machines' addresses as they stand after the inserts above.
  const read =
    builds.length > 0
      ? tx<(IpRow & { service_id: string })[]>`
          select service_id, address, version, prefix_length, purpose from ip_addresses
          where service_id = any(${builds.map(({ m }) => m.service_id)}::uuid[])
          order by service_id, version, address`.execute()
      : undefined;
  const [rows] = await Promise.all([read, ...changes]);
  const ipsByService = new Map<string, IpRow[]>();
  for (const { service_id, ...ip } of rows ?? []) {
    const list = ipsByService.get(service_id);
    if (list) list.push(ip);
    else ipsByService.set(service_id, [ip]);
  }
  await Promise.all([
    writeOutboxBatch(
      tx,
      ns,
      builds.map(({ m }) => machineEventInit(m, true, "", ipsByService.get(m.service_id) ?? [])),
    ),
    tx`update jobs set status = 'succeeded', progress = 100, finished_at = clock_timestamp(), claim = null,
      lease_until = null where id = any(${items.map(({ job }) => job.id)}::uuid[])`.execute(),
  ]);
}
