import { randomBytes } from "node:crypto";
import type { ServiceImpl } from "@connectrpc/connect";
import type { ComputeService } from "@hb/contracts/hb/compute/v1/compute_pb";
import { apiError, badRequest, isUuid, newId, notFound, type Sql, type TxSql } from "@hb/platform";
import type { Drivers, JobOutcome, JobRow, NewMachineRequest, ProviderDriver } from "./driver.ts";
import { createJobRecords, PROGRESS_SQL } from "./job-records.ts";
import type { Jobs } from "./jobs.ts";
import {
  addressesFor,
  assertControllable,
  capabilitiesOf,
  hasInstance,
  type IpRow,
  ipsOf,
  type MachineRow,
  machineJson,
  ownMachine,
} from "./machines.ts";
import { parseSshPublicKey } from "./ssh-key.ts";

const out = (value: unknown) => ({ json: JSON.stringify(value) });

/** Power actions by kind, and the state each one leads to. */
const POWER: Record<string, Record<string, string>> = {
  vps: {
    start: "running",
    stop: "stopped",
    shutdown: "stopped",
    reboot: "running",
    restart: "running",
    poweroff: "stopped",
  },
  dedicated: { on: "running", off: "stopped", restart: "running" },
  game: { start: "running", stop: "stopped", restart: "running", kill: "stopped" },
};
/** What the generic dispatcher accepts; anything else the provider does not expose. */
const DISPATCH = ["start", "stop", "restart", "status", "stats"];
const POWER_ALIASES: Record<string, string> = { start: "on", stop: "off" };

function callerIds(c: { customerId: string } | undefined) {
  if (!c?.customerId) throw apiError("UNAUTHORIZED", "caller missing");
  return c.customerId;
}

export interface ComputeDeps {
  jobs: Jobs;
  drivers: Drivers;
  /** The provider new machines are created on. */
  defaultProvider: string;
}

/** The driver of a machine; a machine whose provider has none cannot be asked anything. */
export function driverOf(drivers: Drivers, m: Pick<MachineRow, "provider">): ProviderDriver {
  const driver = drivers[m.provider];
  if (!driver) throw apiError("PROVIDER_ERROR", `No driver for provider ${m.provider}`);
  return driver;
}

/** A provider's immediate refusal of a job fails the call (424); the job is already recorded failed. */
function refusal(outcome: JobOutcome | undefined): void {
  if (outcome && !outcome.ok) throw apiError("PROVIDER_ERROR", outcome.message);
}

/** Accepted, not yet finished: the spec's answer to an asynchronous call. */
const pending = (job: JobRow, extra: Record<string, unknown> = {}) =>
  out({ completed: false, job_id: job.id, pending: true, ...extra });

export function createHandlers(
  sql: Sql,
  { jobs, drivers, defaultProvider }: ComputeDeps,
): Partial<ServiceImpl<typeof ComputeService>> {
  const jobRecords = createJobRecords(sql);
  /**
   * Accepts a job on the caller's machine under its row lock, then (lock released) hands it to
   * the driver. `prepare` runs the rules and any state change in the accepting transaction.
   */
  async function acceptAndLaunch(
    customerId: string,
    serviceId: string,
    kind: string,
    prepare: (m: MachineRow, tx: TxSql) => Promise<{ action: string; target: string }>,
  ): Promise<{ job: JobRow; outcome: JobOutcome | undefined }> {
    const { job, m } = await sql.begin(async (tx) => {
      const m = await ownMachine(tx, customerId, serviceId, kind, true);
      const { action, target } = await prepare(m, tx);
      return { job: await jobs.accept(tx, m, action, target), m };
    });
    const outcome = await jobs.launch(job, m);
    refusal(outcome);
    return { job, outcome };
  }

  /**
   * The initial driver state of a new machine, as JSON text for the insert (`::text::jsonb`: a
   * parameter typed jsonb would be encoded a second time, as a JSON string).
   */
  function driverState(provider: string, req: NewMachineRequest): string {
    return JSON.stringify(driverOf(drivers, { provider }).initialState(req));
  }

  async function machineRow(serviceId: string): Promise<MachineRow> {
    const [m] = await sql<MachineRow[]>`select * from machines where service_id = ${serviceId}`;
    return m;
  }

  async function powerAction(
    customerId: string,
    serviceId: string,
    kind: string,
    rawAction: string,
    surface: string,
  ) {
    const m = await ownMachine(sql, customerId, serviceId, kind);
    const table = POWER[m.kind] ?? POWER.vps;
    let action = rawAction;
    if (surface === "dispatch") {
      if (!DISPATCH.includes(action)) {
        throw apiError(
          "ACTION_NOT_ALLOWED",
          `The ${m.provider} provider does not expose "${action}" to customers`,
        );
      }
      if (m.kind === "dedicated" && POWER_ALIASES[action]) action = POWER_ALIASES[action];
    } else if (!(action in table)) {
      throw apiError("BAD_REQUEST", `action must be one of ${Object.keys(table).join(", ")}`, {
        violations: [{ field: "action", message: `must be one of ${Object.keys(table).join(", ")}` }],
      });
    }
    if (action === "status" || action === "stats") {
      if (!hasInstance(m)) throw apiError("NOT_FOUND", "The machine does not exist or its build failed");
      if (action === "status") return out({ completed: true, state: m.state, status: m.state });
      return out({ ...(await driverOf(drivers, m).stats(m)), state: m.state });
    }
    const target = table[action];
    const { job, outcome } = await acceptAndLaunch(customerId, serviceId, kind, async (locked) => {
      assertControllable(locked, "power");
      return { action, target };
    });
    if (outcome?.ok) return out({ completed: true, job_id: job.id, state: target, status: "succeeded" });
    return pending(job);
  }

  return {
    async describeMachines(req) {
      const customerId = callerIds(req.caller);
      const ids = req.serviceIds.filter(isUuid);
      if (ids.length === 0) return { machines: [] };
      // Both reads need only the ids, so they run concurrently (one round trip of latency). The
      // addresses of another customer's services are fetched but never matched to a returned row.
      const [rows, ips] = await Promise.all([
        sql<
          MachineRow[]
        >`select * from machines where service_id in ${sql(ids)} and customer_id = ${customerId}`,
        sql<
          { service_id: string; address: string; version: number; prefix_length: number; purpose: string }[]
        >`select * from ip_addresses where service_id in ${sql(ids)} order by version, address`,
      ]);
      const ipsByService = new Map<string, IpRow[]>();
      for (const ip of ips) {
        const list = ipsByService.get(ip.service_id);
        if (list) list.push(ip);
        else ipsByService.set(ip.service_id, [ip]);
      }
      return {
        machines: rows.map((m) => {
          const j = machineJson(m, ipsByService.get(m.service_id) ?? []);
          return {
            serviceId: m.service_id,
            kind: m.kind,
            provider: m.provider,
            hostname: m.hostname,
            primaryIp: j.primary_ip,
            location: m.location,
            instanceState: hasInstance(m) ? m.state : "",
            hasInstance: hasInstance(m),
            json: JSON.stringify(j),
          };
        }),
      };
    },

    async runAction(req) {
      const r = await powerAction(callerIds(req.caller), req.serviceId, req.kind, req.action, req.surface);
      return r;
    },

    async reinstall(req) {
      const customerId = callerIds(req.caller);
      const { job } = await acceptAndLaunch(customerId, req.serviceId, req.kind, async (m, tx) => {
        assertControllable(m, "reinstall");
        if (!m.os_images.includes(req.imageId)) {
          throw apiError("BAD_REQUEST", `image_id "${req.imageId}" is not one of this machine's OS images`, {
            violations: [
              m.kind === "dedicated"
                ? { field: "osImageId", message: "must be one of GET /dedicated/{id}/os-images" }
                : { field: "image_id", message: "must be one of GET /vps/{id}/os-images" },
            ],
          });
        }
        await tx`update machines set state = 'creating', os = ${req.imageId} where service_id = ${m.service_id}`;
        return { action: "reinstall", target: "running" };
      });
      return pending(job, { message: "Reinstall started; the disk is being erased" });
    },

    async resetPassword(req) {
      const customerId = callerIds(req.caller);
      let rebuild = false;
      const { job } = await acceptAndLaunch(customerId, req.serviceId, req.kind, async (m, tx) => {
        assertControllable(m, "password");
        if (m.kind === "dedicated") {
          // Platform-provisioned servers are rebuilt with a generated password.
          rebuild = true;
          await tx`update machines set state = 'creating' where service_id = ${m.service_id}`;
          return { action: "reinstall", target: "running" };
        }
        if (m.state !== "running")
          throw apiError("CONFLICT", "The machine must be running to reset its password");
        await tx`update machines set root_password_set_at = clock_timestamp() where service_id = ${m.service_id}`;
        return { action: "password", target: m.state };
      });
      return pending(job, rebuild ? { password: randomBytes(12).toString("base64url") } : {});
    },

    async getMachineInfo(req) {
      const customerId = callerIds(req.caller);
      const m = await ownMachine(sql, customerId, req.serviceId, req.kind);
      switch (req.what) {
        case "ips": {
          const ips = await ipsOf(sql, m.service_id);
          return out({
            primary_ip: machineJson(m, ips).primary_ip,
            ip_addresses: machineJson(m, ips).ip_addresses,
          });
        }
        case "stats":
          if (!hasInstance(m)) throw apiError("NOT_FOUND", "The machine does not exist or its build failed");
          return out({ ...(await driverOf(drivers, m).stats(m)), state: m.state });
        case "os-images":
          return out({ images: m.os_images.map((id) => ({ id, name: id })) });
        case "actions":
          return out({
            backend: m.provider,
            kind: m.kind,
            actions: hasInstance(m)
              ? [...DISPATCH, ...Object.keys(POWER[m.kind] ?? {})].filter((a, i, all) => all.indexOf(a) === i)
              : [],
            capabilities: capabilitiesOf(m),
          });
        case "power-status":
          return out({
            state: hasInstance(m) ? m.state : "absent",
            power: m.state === "running" ? "on" : "off",
          });
        case "provision-status": {
          const [job] = await sql.unsafe<{ action: string; status: string; progress: number }[]>(
            `select action, status, ${PROGRESS_SQL} as progress from jobs
             where service_id = $1 and action in ('build', 'reinstall') order by started_at desc limit 1`,
            [m.service_id],
          );
          return out({ state: m.state, job: job ?? null });
        }
        case "traffic":
          return out({
            period: new Date().toISOString().slice(0, 7),
            ...(await driverOf(drivers, m).stats(m)).network,
          });
        case "game":
          if (m.kind !== "game") throw apiError("BAD_REQUEST", "This is not a game service");
          return out({
            state: m.state,
            ...(await driverOf(drivers, m).game(m)),
            address: `${(await ipsOf(sql, m.service_id))[0]?.address ?? ""}:25565`,
          });
        default:
          throw badRequest("what", "unknown information");
      }
    },

    async getJob(req) {
      const customerId = callerIds(req.caller);
      if (!isUuid(req.jobId)) throw badRequest("id", "id is not a valid identifier");
      const job = await jobRecords.get(customerId, req.jobId);
      if (!job) throw notFound("Job");
      return { job };
    },

    async listJobs(req) {
      return jobRecords.list(callerIds(req.caller), req);
    },

    async listSshKeys(req) {
      const customerId = callerIds(req.caller);
      const rows = await sql<
        { id: string; name: string; public_key: string; fingerprint: string; created_at: Date }[]
      >`
        select * from ssh_keys where customer_id = ${customerId} order by created_at desc`;
      return out({
        ssh_keys: rows.map((r) => ({
          id: r.id,
          name: r.name,
          public_key: r.public_key,
          fingerprint: r.fingerprint,
          created_at: r.created_at.toISOString(),
        })),
      });
    },

    async createSshKey(req) {
      const customerId = callerIds(req.caller);
      const parsed = parseSshPublicKey(req.publicKey);
      if (!parsed.ok) throw badRequest("publicKey", `publicKey ${parsed.message}`);
      const id = newId();
      const rows = await sql<{ id: string; created_at: Date }[]>`
        insert into ssh_keys (id, customer_id, name, public_key, fingerprint)
        values (${id}, ${customerId}, ${req.name.trim()}, ${parsed.line}, ${parsed.fingerprint})
        on conflict (customer_id, fingerprint) do nothing returning id, created_at`;
      if (rows.length === 0) throw apiError("CONFLICT", "This public key is already stored");
      return out({
        id,
        name: req.name.trim(),
        public_key: parsed.line,
        fingerprint: parsed.fingerprint,
        created_at: rows[0].created_at.toISOString(),
      });
    },

    async deleteSshKey(req) {
      const customerId = callerIds(req.caller);
      if (!isUuid(req.sshKeyId)) throw badRequest("id", "id is not a valid identifier");
      const r = await sql`delete from ssh_keys where id = ${req.sshKeyId} and customer_id = ${customerId}`;
      if (r.count === 0) throw notFound("SSH key");
      return {};
    },

    async adminCreateMachine(req) {
      if (!isUuid(req.serviceId) || !isUuid(req.customerId))
        throw badRequest("service_id", "service_id and customer_id must be UUIDs");
      const state = req.state || "running";
      const built = state === "running" || state === "stopped" || state === "paused";
      const provider = defaultProvider;
      const job = await sql.begin(async (tx) => {
        await tx`insert into machines (service_id, customer_id, kind, provider, hostname, state, has_instance, vcpus, memory_mb,
                                       disk_gb, os, disabled_controls, driver_state)
          values (${req.serviceId}, ${req.customerId}, ${req.kind || "vps"}, ${provider},
                  ${req.hostname || `host-${req.serviceId.slice(-8)}`}, ${state}, ${built}, ${req.vcpus || 1},
                  ${req.memoryMb || 1024}, ${req.diskGb || 20}, ${state === "error" ? "" : "ubuntu-24.04"},
                  ${req.disabledControls ? req.disabledControls.split(",").map((s) => s.trim()) : []},
                  ${driverState(provider, req)}::text::jsonb)
          on conflict (service_id) do update set state = excluded.state, has_instance = excluded.has_instance,
            disabled_controls = excluded.disabled_controls, driver_state = excluded.driver_state`;
        if (built) {
          for (const ip of addressesFor(req.serviceId)) {
            await tx`insert into ip_addresses (service_id, address, version, prefix_length, purpose)
              values (${req.serviceId}, ${ip.address}, ${ip.version}, ${ip.prefix_length}, ${ip.purpose}) on conflict do nothing`;
          }
        }
        return state === "creating"
          ? jobs.accept(
              tx,
              { service_id: req.serviceId, customer_id: req.customerId, provider },
              "build",
              "running",
            )
          : undefined;
      });
      if (job) await jobs.launch(job, await machineRow(req.serviceId));
      const m = await machineRow(req.serviceId);
      return out(machineJson(m, await ipsOf(sql, m.service_id)));
    },

    async provision(req) {
      if (!isUuid(req.serviceId) || !isUuid(req.customerId))
        throw badRequest("service_id", "service_id and customer_id must be UUIDs");
      const provider = defaultProvider;
      const accepted = await sql.begin(async (tx) => {
        const inserted = await tx`
          insert into machines (service_id, customer_id, kind, provider, hostname, location, state, has_instance, vcpus,
                                memory_mb, disk_gb, os, driver_state)
          values (${req.serviceId}, ${req.customerId}, ${req.kind || "vps"}, ${provider}, ${req.hostname},
                  ${req.location || "fra1"}, 'creating', false, ${req.vcpus || 1}, ${req.memoryMb || 1024},
                  ${req.diskGb || 20}, ${req.osImageId || "ubuntu-24.04"}, ${driverState(provider, req)}::text::jsonb)
          on conflict (service_id) do nothing returning service_id`;
        if (inserted.length === 0) {
          const [job] = await tx<
            { id: string }[]
          >`select id from jobs where service_id = ${req.serviceId} and action = 'build' limit 1`;
          return { jobId: job?.id ?? "" };
        }
        const job = await jobs.accept(
          tx,
          { service_id: req.serviceId, customer_id: req.customerId, provider },
          "build",
          "running",
        );
        return { jobId: job.id, job };
      });
      // A build the provider refuses at once is recorded failed (machine.provisioning_failed); billing
      // learns of it from that event like any other failed build, so Provision itself succeeds.
      if (accepted.job) await jobs.launch(accepted.job, await machineRow(req.serviceId));
      return { jobId: accepted.jobId };
    },
  };
}
