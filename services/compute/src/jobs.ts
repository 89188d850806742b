import { type Logger, newId, prepared, type Sql, type TxSql, wakeablePause, writeOutbox } from "@hb/platform";
import { type DriverState, type Drivers, type JobOutcome, type JobRow, noDriver } from "./driver.ts";
import { type IpRow, ipsOf, type MachineRow } from "./machines.ts";
import { settleSuspensions } from "./suspension.ts";

/** How long a claimed job is left to its worker before another may take it over (a crash). */
const LEASE_SECONDS = 30;
/** How soon a job the provider is still working on is asked about again. */
const RECHECK_MS = 1000;
/** How long past a job's expected check the loop keeps looking often (its commit, a slow driver). */
const BUSY_AFTER_DUE_MS = 2000;

const JOB_COLUMNS = "id, service_id, customer_id, action, target_state, copy_id, claim, driver_state";

/**
 * Jobs: every accepted action is one. Each step that touches the provider follows the same three
 * phases so that no row lock is held while a provider is called: accept or claim the job (short
 * transaction, the job leased to this worker), call the driver (no transaction), record the
 * outcome (short transaction, only while the lease is still ours).
 */
export function createJobs(sql: Sql, ns: string, drivers: Drivers) {
  /** Records an accepted action, leased to the caller, who hands it to `launch` after committing. */
  async function accept(
    tx: TxSql,
    m: Pick<MachineRow, "service_id" | "customer_id" | "provider">,
    action: string,
    targetState: string,
    copyId: string | null = null,
  ): Promise<JobRow> {
    const firstCheckMs = drivers[m.provider]?.firstCheckMs(action) ?? 0;
    const [job] = await tx.unsafe<JobRow[]>(
      `insert into jobs (id, service_id, customer_id, action, target_state, copy_id, claim, started_at,
                         lease_until, due_at, expected_at)
       select $1::uuid, $2::uuid, $3::uuid, $4::text, $5::text, $6::uuid, $7::uuid, clock.t, clock.t + make_interval(secs => $8),
              clock.t + make_interval(secs => $9), clock.t + make_interval(secs => $9)
       from (select clock_timestamp() as t) clock
       returning ${JOB_COLUMNS}`,
      [
        newId(),
        m.service_id,
        m.customer_id,
        action,
        targetState,
        copyId,
        newId(),
        LEASE_SECONDS,
        firstCheckMs / 1000,
      ],
      prepared,
    );
    expectJob(firstCheckMs);
    return job;
  }

  /**
   * Asks the machine's driver to start an accepted job (call after the accepting transaction has
   * committed) and records what it answers at once. Returns that outcome, or undefined while the
   * job runs on (the loop asks the driver again when it is due).
   */
  async function launch(job: JobRow, m: MachineRow): Promise<JobOutcome | undefined> {
    const driver = drivers[m.provider];
    const outcome = driver ? await driver.start(job, m) : noDriver(m.provider);
    await record(job, outcome, "due");
    return outcome;
  }

  /**
   * Applies an outcome if the job is still running and leased to this worker. Without an outcome
   * the lease is given up: "due" leaves the job to its due time, "recheck" asks again shortly.
   * Statements that do not wait on each other's answers go together (postgres.js pipelines what
   * one tick starts on the transaction's connection; `.execute()` keeps them in the order
   * written): a build's outcome is 5 round trips, and giving up a lease one statement.
   */
  async function record(job: JobRow, outcome: JobOutcome | undefined, next: "due" | "recheck") {
    if (!outcome) {
      // Only while the job is running and still this worker's: the statement checks it on the
      // row's latest version, as locking the row and then checking did.
      const dueAt =
        next === "recheck"
          ? sql`clock_timestamp() + make_interval(secs => ${RECHECK_MS / 1000})`
          : sql`due_at`;
      await sql`update jobs set claim = null, lease_until = null, due_at = ${dueAt}
        where id = ${job.id} and claim = ${job.claim} and status = 'running'`;
      return;
    }
    const followUps = await sql.begin(async (tx): Promise<JobRow[]> => {
      // Job, then machine, as before; the machine's lock is taken even when the job turns out to
      // be no longer ours, and ends with this transaction.
      const [[held], [m]] = await Promise.all([
        tx`select id from jobs where id = ${job.id} and claim = ${job.claim} and status = 'running' for update`.execute(),
        tx<MachineRow[]>`select * from machines where service_id = ${job.service_id} for update`.execute(),
      ]);
      if (!held) return [];
      if (!m) {
        await tx`update jobs set status = 'failed', progress = 100, finished_at = clock_timestamp(), claim = null,
          lease_until = null, error_code = 'NOT_FOUND', error_message = 'The machine no longer exists'
          where id = ${job.id}`;
        return [];
      }
      await apply(tx, job, m, outcome);
      // A job that ended during a suspension (a build, or a stop an unsuspension overtook) leaves
      // the machine for the suspension rule; a failed suspend or unsuspend is not tried again at
      // once (its failure is the job's record). A machine the rule has no business with costs no
      // statement (a build's outcome stays 5 round trips).
      const suspensionJob = job.action === "suspend" || job.action === "unsuspend";
      const concerned = m.service_status === "suspended" || m.state_before_suspension != null;
      return !concerned || (suspensionJob && !outcome.ok)
        ? []
        : settleSuspensions(tx, accept, [m.service_id]);
    });
    await launchAll(followUps);
  }

  /** Hands jobs accepted in a transaction that has committed to their drivers. */
  async function launchAll(accepted: JobRow[]) {
    for (const job of accepted) {
      const [m] = await sql<MachineRow[]>`select * from machines where service_id = ${job.service_id}`;
      if (m) await launch(job, m);
    }
  }

  async function apply(tx: TxSql, job: JobRow, m: MachineRow, outcome: JobOutcome) {
    if (!outcome.ok) {
      await Promise.all([
        outcome.destroyed
          ? tx`update machines set state = 'error', has_instance = false where service_id = ${m.service_id}`.execute()
          : undefined,
        tx`update jobs set status = 'failed', progress = 100, finished_at = clock_timestamp(), claim = null,
          lease_until = null, error_code = ${outcome.code}, error_message = ${outcome.message} where id = ${job.id}`.execute(),
        job.action === "build" ? machineEvent(tx, m, false, outcome.message, []) : undefined,
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
      changes.push(tx`update copies set status = 'available' where id = ${job.copy_id}`.execute());
    if (outcome.snapshotsLost)
      changes.push(
        tx`update copies set status = 'deleted' where service_id = ${m.service_id}
          and collection = 'snapshot' and status <> 'deleted'`.execute(),
      );
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
      addresses ? machineEvent(tx, m, true, "", addresses) : undefined,
      tx`update jobs set status = 'succeeded', progress = 100, finished_at = clock_timestamp(), claim = null,
        lease_until = null where id = ${job.id}`.execute(),
    ]);
  }

  async function machineEvent(tx: TxSql, m: MachineRow, success: boolean, error: string, ips: IpRow[]) {
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

  /** Leases up to 50 due jobs to this worker in one statement; the row locks end with it. */
  async function claimDue(): Promise<JobRow[]> {
    const claim = newId();
    const rows = await sql.unsafe<(JobRow & { due_at: Date })[]>(
      `with due as (
         select id, due_at from jobs
         where status = 'running' and due_at <= clock_timestamp()
           and (lease_until is null or lease_until < clock_timestamp())
         order by due_at limit 50 for update skip locked)
       update jobs j set claim = $1, lease_until = clock_timestamp() + make_interval(secs => $2)
       from due where j.id = due.id
       returning ${JOB_COLUMNS.split(", ")
         .map((c) => `j.${c}`)
         .join(", ")}, due.due_at`,
      [claim, LEASE_SECONDS],
      prepared,
    );
    return rows.sort((a, b) => a.due_at.getTime() - b.due_at.getTime());
  }

  /** One pass of the loop: claim, then for each job call its driver and record the answer. */
  async function tick(): Promise<number> {
    const due = await claimDue();
    for (const job of due) {
      const [m] = await sql<MachineRow[]>`select * from machines where service_id = ${job.service_id}`;
      const driver = m ? drivers[m.provider] : undefined;
      const outcome = driver ? await driver.run(job, m) : noDriver(m?.provider ?? "(no machine)");
      await record(job, outcome, "recheck");
    }
    return due.length;
  }

  /** Until when (ms since the epoch) the loop keeps its short tick: a job of this replica is near. */
  let busyUntil = 0;
  const expectJob = (inMs: number) => {
    busyUntil = Math.max(busyUntil, Date.now() + inMs + BUSY_AFTER_DUE_MS);
  };

  /**
   * The job loop: finishes due jobs through each machine's provider driver. State lives in the
   * database, so a restart resumes where it stopped and several replicas can run it. It looks every
   * `tickMs` while this replica has work in hand or a job of its own falls due, and every `idleMs`
   * otherwise: that finds jobs other replicas left, or made due by hand, within a second, without
   * a claim statement ten times a second on an idle machine (issue 13: most of compute's idle CPU).
   */
  function startLoop(log: Logger, tickMs = 100, idleMs = 1000) {
    let stopped = false;
    const idle = wakeablePause();
    const loop = (async () => {
      while (!stopped) {
        let claimed = 0;
        try {
          claimed = await tick();
        } catch (err) {
          log.warn("job loop tick failed", { err });
        }
        if (claimed > 0) expectJob(RECHECK_MS);
        const wait = Date.now() < busyUntil ? tickMs : idleMs;
        await idle.pause(wait);
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        idle.wake();
        await loop;
      },
    };
  }

  return {
    accept,
    launch,
    launchAll,
    tick,
    startLoop,
    /** The suspension rule (suspension.ts) with this loop's `accept`; launch its jobs after commit. */
    settleSuspensions: (tx: TxSql, serviceIds: string[]) => settleSuspensions(tx, accept, serviceIds),
  };
}

export type Jobs = ReturnType<typeof createJobs>;

/**
 * Keeps a driver's progress on a job (the provider operation it waits on) in the job row, while
 * the job is still running and leased to the worker that asks: a restart resumes from it.
 */
export const rememberJobProgress = (sql: Sql) => async (job: JobRow, progress: DriverState) => {
  job.driver_state = progress;
  await sql`update jobs set driver_state = ${JSON.stringify(progress)}::text::jsonb
    where id = ${job.id} and claim = ${job.claim} and status = 'running'`;
};
