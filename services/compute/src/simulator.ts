import { type Logger, newId, type Sql, type TxSql, writeOutbox } from "@hb/platform";
import { addressesFor, type MachineRow } from "./machines.ts";

export interface SimulatorConfig {
  buildMs: number;
  actionMs: number;
  reinstallMs: number;
}

/** Records an accepted action as a job the simulator finishes after its duration. */
export async function startJob(
  tx: TxSql,
  m: Pick<MachineRow, "service_id" | "customer_id">,
  action: string,
  targetState: string,
  durationMs: number,
): Promise<string> {
  const id = newId();
  await tx`insert into jobs (id, service_id, customer_id, action, target_state, due_at)
    values (${id}, ${m.service_id}, ${m.customer_id}, ${action}, ${targetState},
            clock_timestamp() + make_interval(secs => ${durationMs / 1000}))`;
  return id;
}

export interface JobRow {
  id: string;
  service_id: string;
  action: string;
  target_state: string;
  copy_id: string | null;
}

/** What a provider reports for a due job; compute applies it to the machine, the job and the outbox. */
export type JobOutcome =
  | {
      ok: true /** the instance.state to record */;
      state?: string /** the machine (re)built */;
      built?: boolean;
    }
  | {
      ok: false;
      code: string;
      message: string /** the instance is gone (failed build or rebuild) */;
      destroyed?: boolean;
    };

/**
 * One provider backend (the machine row's `provider` column picks it). `run` carries out or checks
 * on a due job and answers its outcome, or undefined when the provider's task is still running (the
 * job is asked about again a second later). See docs/providers.md.
 */
export interface ProviderDriver {
  readonly name: string;
  run(job: JobRow, m: MachineRow): Promise<JobOutcome | undefined>;
}

export const BUILD_FAILED: JobOutcome = {
  ok: false,
  code: "BUILD_FAILED",
  message: "The hypervisor could not build the machine",
  destroyed: true,
};

/** The default backend: every job succeeds when due, except builds of a machine flagged to fail. */
export const simulatorDriver: ProviderDriver = {
  name: "simulator",
  async run(job, m) {
    if (job.action === "build" || job.action === "reinstall") {
      return m.fail_build ? BUILD_FAILED : { ok: true, state: "running", built: true };
    }
    if (job.action === "password") return { ok: true };
    return { ok: true, state: job.target_state };
  },
};

export type Drivers = Record<string, ProviderDriver>;

/**
 * The job loop: finishes due jobs through each machine's provider driver. State lives in the
 * database, so a restart resumes where it stopped and several replicas can run it (SKIP LOCKED).
 */
export function startSimulator(
  sql: Sql,
  ns: string,
  log: Logger,
  tickMs = 100,
  drivers: Drivers = { simulator: simulatorDriver },
) {
  let stopped = false;
  const tick = async () => {
    await sql.begin(async (tx) => {
      const due = await tx<JobRow[]>`
        select id, service_id, action, target_state, copy_id from jobs where status = 'running' and due_at <= clock_timestamp()
        order by due_at limit 50 for update skip locked`;
      for (const job of due) await finish(tx, ns, job, drivers);
    });
  };
  const loop = (async () => {
    while (!stopped) {
      try {
        await tick();
      } catch (err) {
        log.warn("simulator tick failed", { err });
      }
      await new Promise((r) => setTimeout(r, tickMs));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

async function finish(tx: TxSql, ns: string, job: JobRow, drivers: Drivers) {
  const [m] = await tx<MachineRow[]>`select * from machines where service_id = ${job.service_id} for update`;
  const driver = drivers[m.provider];
  const outcome: JobOutcome | undefined = driver
    ? await driver.run(job, m)
    : { ok: false, code: "PROVIDER_ERROR", message: `No driver for provider ${m.provider}` };
  if (!outcome) {
    await tx`update jobs set due_at = clock_timestamp() + interval '1 second' where id = ${job.id}`;
    return;
  }
  if (!outcome.ok) {
    if (outcome.destroyed)
      await tx`update machines set state = 'error', has_instance = false where service_id = ${m.service_id}`;
    await tx`update jobs set status = 'failed', progress = 100, finished_at = clock_timestamp(),
      error_code = ${outcome.code}, error_message = ${outcome.message} where id = ${job.id}`;
    if (job.action === "build") await machineEvent(tx, ns, m, false, outcome.message);
    return;
  }
  if (outcome.built) {
    for (const ip of addressesFor(m.service_id)) {
      await tx`insert into ip_addresses (service_id, address, version, prefix_length, purpose)
        values (${m.service_id}, ${ip.address}, ${ip.version}, ${ip.prefix_length}, ${ip.purpose}) on conflict do nothing`;
    }
    await tx`update machines set has_instance = true where service_id = ${m.service_id}`;
  }
  // Creating a copy leaves the machine as it was; reverting or restoring brings it back up.
  if (job.copy_id) await tx`update copies set status = 'available' where id = ${job.copy_id}`;
  if (outcome.state)
    await tx`update machines set state = ${outcome.state} where service_id = ${m.service_id}`;
  if (job.action === "build") await machineEvent(tx, ns, m, true, "");
  await tx`update jobs set status = 'succeeded', progress = 100, finished_at = clock_timestamp() where id = ${job.id}`;
}

async function machineEvent(tx: TxSql, ns: string, m: MachineRow, success: boolean, error: string) {
  const ip = addressesFor(m.service_id)[0].address;
  await writeOutbox(tx, ns, {
    type: success ? "machine.provisioned" : "machine.provisioning_failed",
    payload: {
      case: "machine",
      value: {
        serviceId: m.service_id,
        customerId: m.customer_id,
        success,
        serverIp: success ? ip : "",
        hostname: m.hostname,
        error,
      },
    },
  });
}

/** Finished jobs stay readable for this long (GET /jobs/{id}); older ones are purged hourly. */
export const JOB_RETENTION_DAYS = 30;

export function startJobPurge(sql: Sql, log: Logger): { stop(): void } {
  const purge = async () => {
    try {
      const r = await sql`delete from jobs
        where finished_at < now() - make_interval(days => ${JOB_RETENTION_DAYS})`;
      if (r.count) log.info("finished jobs purged", { rows: r.count });
    } catch (err) {
      log.warn("job purge failed", { err });
    }
  };
  void purge();
  const timer = setInterval(purge, 3600_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
