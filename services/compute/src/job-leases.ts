/**
 * A job row's lease: the worker that accepted or claimed a job holds it for LEASE_SECONDS, and only
 * that worker records the job's outcome (jobs.ts); a crashed worker's jobs are claimed again when
 * their lease runs out.
 */
import { newId, prepared, type Sql, type TxSql } from "@hb/platform";
import type { JobRow } from "./driver.ts";
import type { MachineRow } from "./machines.ts";

/** How long a claimed job is left to its worker before another may take it over (a crash). */
const LEASE_SECONDS = 30;

const JOB_COLUMNS = "id, service_id, customer_id, action, target_state, copy_id, claim, driver_state";

/** An accepted action's job to insert: its machine, action and state, and when it is first due. */
export interface NewJob {
  m: Pick<MachineRow, "service_id" | "customer_id">;
  action: string;
  targetState: string;
  copyId: string | null;
  firstCheckMs: number;
}

/**
 * Inserts accepted actions' jobs in one statement, each leased to the caller and first due after its
 * `firstCheckMs`; answers them in the order given. An order's builds were a statement each: ten
 * builds sent ten inserts in their round trip.
 */
export async function insertJobs(tx: TxSql, jobs: NewJob[]): Promise<JobRow[]> {
  if (jobs.length === 0) return [];
  const ids = jobs.map(() => newId());
  const rows = await tx.unsafe<JobRow[]>(
    `insert into jobs (id, service_id, customer_id, action, target_state, copy_id, claim, started_at,
                         lease_until, due_at, expected_at)
       select j.id, j.service_id, j.customer_id, j.action, j.target_state, j.copy_id, j.claim, clock.t,
              clock.t + make_interval(secs => $8), clock.t + make_interval(secs => j.first_check),
              clock.t + make_interval(secs => j.first_check)
       from (select clock_timestamp() as t) clock,
            unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::uuid[], $7::uuid[], $9::float8[])
              as j(id, service_id, customer_id, action, target_state, copy_id, claim, first_check)
       returning ${JOB_COLUMNS}`,
    [
      ids,
      jobs.map((j) => j.m.service_id),
      jobs.map((j) => j.m.customer_id),
      jobs.map((j) => j.action),
      jobs.map((j) => j.targetState),
      jobs.map((j) => j.copyId),
      jobs.map(() => newId()),
      LEASE_SECONDS,
      jobs.map((j) => j.firstCheckMs / 1000),
    ],
    prepared,
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => {
    const row = byId.get(id);
    if (!row) throw new Error("a job's insert answered no row");
    return row;
  });
}

/** Leases up to 50 due jobs to this worker in one statement; the row locks end with it. */
export async function claimDue(sql: Sql): Promise<JobRow[]> {
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
