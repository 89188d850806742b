import type { Sql, TxSql } from "@hb/platform";
import { type DriverState, type Drivers, type JobOutcome, type JobRow, noDriver } from "./driver.ts";
import { claimDue, insertJobs, type NewJob } from "./job-leases.ts";
import { jobLoop, RECHECK_MS } from "./job-loop.ts";
import { applyOutcome, applySuccesses, isPlain, type Success } from "./job-outcome.ts";
import type { MachineRow } from "./machines.ts";
import { settleSuspensions } from "./suspension.ts";

/**
 * Jobs: every accepted action is one. Each step that touches the provider follows the same three
 * phases so that no row lock is held while a provider is called: accept or claim the job (short
 * transaction, the job leased to this worker), call the driver (no transaction), record the
 * outcome (short transaction, only while the lease is still ours).
 */
export function createJobs(sql: Sql, ns: string, drivers: Drivers) {
  const pace = jobLoop(tick);

  /** Records an accepted action, leased to the caller, who hands it to `launch` after committing. */
  async function accept(
    tx: TxSql,
    m: Pick<MachineRow, "service_id" | "customer_id" | "provider">,
    action: string,
    targetState: string,
    copyId: string | null = null,
  ): Promise<JobRow> {
    const [job] = await acceptMany(tx, [{ m, action, targetState, copyId }]);
    return job;
  }

  /** `accept` for several actions at once (an order's builds), in one statement. */
  async function acceptMany(
    tx: TxSql,
    actions: (Pick<NewJob, "action" | "targetState"> & {
      m: Pick<MachineRow, "service_id" | "customer_id" | "provider">;
      copyId?: string | null;
    })[],
  ): Promise<JobRow[]> {
    const fresh: NewJob[] = actions.map((a) => ({
      ...a,
      copyId: a.copyId ?? null,
      firstCheckMs: drivers[a.m.provider]?.firstCheckMs(a.action) ?? 0,
    }));
    const jobs = await insertJobs(tx, fresh);
    for (const j of fresh) pace.expectJob(j.firstCheckMs);
    return jobs;
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
   * launch for many accepted jobs (an order's builds): their drivers asked side by side, then
   * their answers recorded together (recordAnswers): the leases of the jobs still running given
   * back in one statement, not one each. Answers the services whose job could not be started or
   * recorded, with the error; their jobs stay leased until the loop takes them up.
   */
  async function launchMany(items: { job: JobRow; m: MachineRow }[]): Promise<Map<string, unknown>> {
    const failed = new Map<string, unknown>();
    const answers: Answer[] = [];
    await Promise.all(
      items.map(async ({ job, m }) => {
        try {
          const driver = drivers[m.provider];
          const outcome = driver ? await driver.start(job, m) : noDriver(m.provider);
          answers.push({ job, outcome, recheckMs: RECHECK_MS });
        } catch (err) {
          failed.set(job.service_id, err);
        }
      }),
    );
    try {
      await recordAnswers(answers, "due");
    } catch (err) {
      for (const a of answers) failed.set(a.job.service_id, err);
    }
    return failed;
  }

  /**
   * Applies an outcome if the job is still running and leased to this worker. Without an outcome
   * the lease is given up: "due" leaves the job to its due time, "recheck" asks again shortly.
   * Statements that do not wait on each other's answers go together (postgres.js pipelines what
   * one tick starts on the transaction's connection; `.execute()` keeps them in the order
   * written): a build's outcome is 5 round trips, and giving up a lease one statement.
   */
  async function record(
    job: JobRow,
    outcome: JobOutcome | undefined,
    next: "due" | "recheck",
    recheckMs = RECHECK_MS,
  ) {
    if (!outcome) {
      // Only while the job is running and still this worker's: the statement checks it on the
      // row's latest version, as locking the row and then checking did.
      const dueAt =
        next === "recheck"
          ? sql`clock_timestamp() + make_interval(secs => ${recheckMs / 1000})`
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
      await applyOutcome(tx, ns, job, m, outcome);
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

  /**
   * One pass of the loop: claim the due jobs, read their machines in one query, ask each job's
   * driver, then record the answers. A machine's second job of the same pass waits for the first
   * to be recorded and reads the machine again (its driver sees what the first job left).
   */
  async function tick(): Promise<number> {
    const due = await claimDue(sql);
    if (due.length === 0) return 0;
    const seen = new Set<string>();
    const first: JobRow[] = [];
    const later: JobRow[] = [];
    for (const job of due) {
      (seen.has(job.service_id) ? later : first).push(job);
      seen.add(job.service_id);
    }
    const machines = await sql<MachineRow[]>`
      select * from machines where service_id = any(${first.map((j) => j.service_id)}::uuid[])`;
    const byService = new Map(machines.map((m) => [m.service_id, m]));
    const answered: Answer[] = [];
    for (const job of first) answered.push(await ask(job, byService.get(job.service_id)));
    await recordAnswers(answered);
    for (const job of later) {
      const [m] = await sql<MachineRow[]>`select * from machines where service_id = ${job.service_id}`;
      const a = await ask(job, m);
      await record(job, a.outcome, "recheck", a.recheckMs);
    }
    return due.length;
  }

  async function ask(job: JobRow, m: MachineRow | undefined): Promise<Answer> {
    const driver = m ? drivers[m.provider] : undefined;
    const outcome = driver && m ? await driver.run(job, m) : noDriver(m?.provider ?? "(no machine)");
    return { job, outcome, recheckMs: driver?.recheckMs?.(job) ?? RECHECK_MS };
  }

  /**
   * Records answers of a pass or a launch: the leases of jobs still running given back in one
   * statement ("due": left to their due time; "recheck": due again after the driver's recheckMs),
   * and the plain successes (a build, a power action: no copy, nothing kept for the driver) in one
   * transaction of set-wise statements, 5 round trips however many jobs, against 5 for each job
   * one by one. The rest, and any whose machine the transaction finds lost, suspended or gone, are
   * recorded one by one as before.
   */
  async function recordAnswers(answers: Answer[], next: "due" | "recheck" = "recheck") {
    const running = answers.filter((a) => !a.outcome);
    const plain = answers.filter((a) => isPlain(a.job, a.outcome));
    const others = answers.filter((a) => a.outcome && !isPlain(a.job, a.outcome));
    if (running.length > 0) {
      const dueAt =
        next === "recheck" ? sql`clock_timestamp() + make_interval(secs => v.secs)` : sql`j.due_at`;
      await sql`update jobs j set claim = null, lease_until = null, due_at = ${dueAt}
        from unnest(${running.map((a) => a.job.id)}::uuid[], ${running.map((a) => a.job.claim)}::uuid[],
                    ${running.map((a) => a.recheckMs / 1000)}::float8[]) as v(id, claim, secs)
        where j.id = v.id and j.claim = v.claim and j.status = 'running'`;
    }
    // A failed transaction (a deadlock with another writer of these machines, say) leaves every
    // plain answer to the one-by-one path, which records each or fails on its own.
    const oneByOne = plain.length > 0 ? await recordPlain(plain).catch(() => plain) : [];
    for (const a of [...oneByOne, ...others]) await record(a.job, a.outcome, next, a.recheckMs);
  }

  /** Records plain successes together; answers the ones it left to be recorded one by one. */
  async function recordPlain(answers: Answer[]): Promise<Answer[]> {
    return sql.begin(async (tx) => {
      // Jobs, then machines, each in id order: two passes (replicas) take their locks in one order.
      const [held, machines] = await Promise.all([
        tx<{ id: string; claim: string }[]>`select id, claim from jobs
          where id = any(${answers.map((a) => a.job.id)}::uuid[]) and status = 'running' order by id for update`.execute(),
        tx<MachineRow[]>`select * from machines
          where service_id = any(${answers.map((a) => a.job.service_id)}::uuid[]) order by service_id for update`.execute(),
      ]);
      const locked = new Map(machines.map((m) => [m.service_id, m]));
      // Only the jobs still leased to this worker (as record checks one job), in the pass's order.
      const claimOf = new Map(held.map((h) => [h.id, h.claim]));
      const ours = answers.filter((a) => claimOf.get(a.job.id) === a.job.claim);
      // A machine gone, lost, or concerned by the suspension rule takes the one-by-one path.
      const together = ours.filter((a) => {
        const m = locked.get(a.job.service_id);
        return m && !m.lost_at && m.service_status !== "suspended" && m.state_before_suspension == null;
      });
      const alone = ours.filter((a) => !together.includes(a));
      if (together.length === 0) return alone;
      await applySuccesses(
        tx,
        ns,
        together.map((a) => ({
          job: a.job,
          m: locked.get(a.job.service_id)!,
          outcome: a.outcome as Success,
        })),
      );
      return alone;
    });
  }

  return {
    accept,
    acceptMany,
    launch,
    launchMany,
    launchAll,
    tick,
    startLoop: pace.startLoop,
    /** The suspension rule (suspension.ts) with this loop's `accept`; launch its jobs after commit. */
    settleSuspensions: (tx: TxSql, serviceIds: string[]) => settleSuspensions(tx, accept, serviceIds),
  };
}

export type Jobs = ReturnType<typeof createJobs>;

/** A driver's answer in a pass: no outcome while the job runs on, asked again after `recheckMs`. */
interface Answer {
  job: JobRow;
  outcome: JobOutcome | undefined;
  recheckMs: number;
}

/**
 * Keeps a driver's progress on a job (the provider operation it waits on) in the job row, while
 * the job is still running and leased to the worker that asks: a restart resumes from it.
 */
export const rememberJobProgress = (sql: Sql) => async (job: JobRow, progress: DriverState) => {
  job.driver_state = progress;
  await sql`update jobs set driver_state = ${JSON.stringify(progress)}::text::jsonb
    where id = ${job.id} and claim = ${job.claim} and status = 'running'`;
};
