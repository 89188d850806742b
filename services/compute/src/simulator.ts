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

interface JobRow {
  id: string;
  service_id: string;
  action: string;
  target_state: string;
  copy_id: string | null;
}

/**
 * The simulated hypervisor: finishes due jobs. State lives in the database, so a restart resumes
 * where it stopped and several replicas can run it (SKIP LOCKED).
 */
export function startSimulator(sql: Sql, ns: string, log: Logger, tickMs = 100) {
  let stopped = false;
  const tick = async () => {
    await sql.begin(async (tx) => {
      const due = await tx<JobRow[]>`
        select id, service_id, action, target_state, copy_id from jobs where status = 'running' and due_at <= clock_timestamp()
        order by due_at limit 50 for update skip locked`;
      for (const job of due) await finish(tx, ns, job);
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

async function finish(tx: TxSql, ns: string, job: JobRow) {
  const [m] = await tx<MachineRow[]>`select * from machines where service_id = ${job.service_id} for update`;
  if (job.action === "build" || job.action === "reinstall") {
    if (m.fail_build) {
      await tx`update machines set state = 'error', has_instance = false where service_id = ${m.service_id}`;
      await tx`update jobs set status = 'failed', progress = 100, finished_at = clock_timestamp(),
        error_code = 'BUILD_FAILED', error_message = 'The hypervisor could not build the machine' where id = ${job.id}`;
      if (job.action === "build")
        await machineEvent(tx, ns, m, false, "The hypervisor could not build the machine");
      return;
    }
    for (const ip of addressesFor(m.service_id)) {
      await tx`insert into ip_addresses (service_id, address, version, prefix_length, purpose)
        values (${m.service_id}, ${ip.address}, ${ip.version}, ${ip.prefix_length}, ${ip.purpose}) on conflict do nothing`;
    }
    await tx`update machines set state = 'running', has_instance = true where service_id = ${m.service_id}`;
    if (job.action === "build") await machineEvent(tx, ns, m, true, "");
  } else if (job.copy_id) {
    // Creating a copy leaves the machine as it was; reverting or restoring brings it back up.
    await tx`update copies set status = 'available' where id = ${job.copy_id}`;
    await tx`update machines set state = ${job.target_state} where service_id = ${m.service_id}`;
  } else if (job.action !== "password") {
    await tx`update machines set state = ${job.target_state} where service_id = ${m.service_id}`;
  }
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
