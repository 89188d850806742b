import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Job, JobSchema, JobStatus } from "@hb/contracts/hb/compute/v1/jobs_pb";
import { pageWindow, prepared, type Sql } from "@hb/platform";

/** Finished jobs are kept (and shown) this long; the hourly purge removes them afterwards. */
const RETENTION = "30 days";

const STATUS_BY_NAME: Record<string, JobStatus> = {
  running: JobStatus.RUNNING,
  succeeded: JobStatus.SUCCEEDED,
  failed: JobStatus.FAILED,
};
const NAME_BY_STATUS = new Map(Object.entries(STATUS_BY_NAME).map(([name, s]) => [s, name]));

/**
 * A job's progress (0-100), read at query time from the database's clock: the share of the time
 * between its start and the driver's expected finish (expected_at, from its `firstCheckMs`) already
 * gone, held at 99 while the job runs past it, 100 once it has finished.
 */
const PROGRESS_SQL = `case when status <> 'running' then 100
  else coalesce(least(99, greatest(0, floor(100 * extract(epoch from clock_timestamp() - started_at)
         / nullif(extract(epoch from expected_at - started_at), 0))))::int, 99) end`;

const RECORD_COLUMNS = `id, service_id, action, status, error_code, error_message, started_at, finished_at,
  ${PROGRESS_SQL} as progress,
  (select m.hostname from machines m where m.service_id = jobs.service_id) as hostname`;

interface JobRecordRow {
  id: string;
  service_id: string;
  action: string;
  status: string;
  progress: number;
  error_code: string | null;
  error_message: string | null;
  started_at: Date;
  finished_at: Date | null;
  hostname: string | null;
}

function toJob(r: JobRecordRow): Job {
  return create(JobSchema, {
    id: r.id,
    serviceId: r.service_id,
    action: r.action,
    status: STATUS_BY_NAME[r.status] ?? JobStatus.UNSPECIFIED,
    progress: r.progress,
    startedAt: timestampFromDate(r.started_at),
    finishedAt: r.finished_at ? timestampFromDate(r.finished_at) : undefined,
    error: r.error_code ? { code: r.error_code, message: r.error_message ?? "" } : undefined,
    hostname: r.hostname ?? "",
  });
}

export interface JobFilter {
  status: JobStatus;
  serviceId: string;
  action: string;
  page: number;
  limit: number;
}

/**
 * One statement: the matching jobs are counted and one page of them read, both walking
 * jobs_customer_started (customer_id, started_at desc, id desc), the page in the index's order so
 * it stops after offset + limit rows. The count's row is kept by the left join, so a page past the
 * end still answers the total.
 */
export function listQuery(customerId: string, f: JobFilter): [string, (string | number | null)[]] {
  // The contract bounds page and limit and refuses a malformed service id or an undefined status.
  const { limit, offset } = pageWindow(f.page, f.limit);
  const status = NAME_BY_STATUS.get(f.status) ?? null;
  const matching = `from jobs where customer_id = $1
    and (finished_at is null or finished_at > now() - interval '${RETENTION}')
    and ($2::text is null or status = $2)
    and ($3::uuid is null or service_id = $3)
    and ($4::text is null or action = $4)`;
  return [
    `select c.total, p.* from (select count(*)::int as total ${matching}) c
     left join lateral (
       select ${RECORD_COLUMNS} ${matching}
       order by started_at desc, id desc limit $5 offset $6) p on true
     order by p.started_at desc, p.id desc`,
    [customerId, status, f.serviceId || null, f.action || null, limit, offset],
  ];
}

/** The customer's view of jobs: one job, or a filtered page of them, newest first. */
export function createJobRecords(sql: Sql) {
  async function get(customerId: string, jobId: string): Promise<Job | undefined> {
    const [r] = await sql.unsafe<JobRecordRow[]>(
      `select ${RECORD_COLUMNS} from jobs where id = $1 and customer_id = $2
         and (finished_at is null or finished_at > now() - interval '${RETENTION}')`,
      [jobId, customerId],
      prepared,
    );
    return r && toJob(r);
  }

  async function list(customerId: string, f: JobFilter): Promise<{ jobs: Job[]; total: number }> {
    const [text, params] = listQuery(customerId, f);
    const rows = await sql.unsafe<(JobRecordRow & { total: number })[]>(text, params);
    return { jobs: rows.filter((r) => r.id).map(toJob), total: rows[0]?.total ?? 0 };
  }

  /** The latest build or reinstall of a service's machine, however long ago it finished. */
  async function latestBuild(serviceId: string): Promise<Job | undefined> {
    const [r] = await sql.unsafe<JobRecordRow[]>(
      `select ${RECORD_COLUMNS} from jobs where service_id = $1 and action in ('build', 'reinstall')
       order by started_at desc limit 1`,
      [serviceId],
      prepared,
    );
    return r && toJob(r);
  }

  return { get, list, latestBuild };
}

export type JobRecords = ReturnType<typeof createJobRecords>;
