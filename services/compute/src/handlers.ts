import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ProvisionRequest } from "@hb/contracts/hb/compute/v1/compute_pb";
import { type SshKey, SshKeySchema } from "@hb/contracts/hb/compute/v1/ssh_keys_pb";
import { apiError, badRequest, newId, notFound, type Sql } from "@hb/platform";
import { createActions } from "./actions.ts";
import { capacityRefusals, hostCapacities, noCapacity } from "./capacity.ts";
import { type ComputeDeps, callerId, driverOf, type Handlers } from "./context.ts";
import { createCopies } from "./copies.ts";
import { createDeskMachine, createDeskSearch } from "./desk-lookups.ts";
import type { NewMachineRequest } from "./driver.ts";
import { controls, instanceStates, machineKinds } from "./enums.ts";
import { createJobRecords } from "./job-records.ts";
import { createMachineInfo } from "./machine-info.ts";
import { addressesFor, type IpRow, ipsOf, type MachineRow, machineSummary } from "./machines.ts";
import { applyServiceRecords, createServiceRecords } from "./service-records.ts";
import { parseSshPublicKey } from "./ssh-key.ts";

export type { ComputeDeps } from "./context.ts";

interface SshKeyRow {
  id: string;
  name: string;
  public_key: string;
  fingerprint: string;
  created_at: Date;
}

const sshKeyOf = (r: SshKeyRow): SshKey =>
  create(SshKeySchema, {
    id: r.id,
    name: r.name,
    publicKey: r.public_key,
    fingerprint: r.fingerprint,
    createdAt: timestampFromDate(r.created_at),
  });

/**
 * The handlers of all three of compute's service definitions (ComputeService for the gateway,
 * ComputeProvisioningService for billing, ComputeStaffService for the admin surface): one object,
 * bound to each definition in main.ts; the allow-list decides who may call which.
 */
export function createHandlers(sql: Sql, deps: ComputeDeps): Handlers {
  return {
    ...createCore(sql, deps),
    ...createActions(sql, deps),
    ...createMachineInfo(sql, deps),
    ...createCopies(sql, deps),
    ...createDeskSearch(sql),
    ...createDeskMachine(sql),
    ...createServiceRecords(sql),
  };
}

/** Machines for billing and the admin, SSH keys and job records. */
function createCore(
  sql: Sql,
  { jobs, drivers, defaultProvider, vpsProvider, maxMachines = 0 }: ComputeDeps,
): Handlers {
  const jobRecords = createJobRecords(sql);

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

  /** The stored kind of a new machine: a VPS unless the request names another. */
  const newKind = (kind: number) => machineKinds.name(kind) ?? "vps";
  /** The provider a new machine of this kind is created on (VPSes may have their own). */
  const providerFor = (kind: string) => (kind === "vps" && vpsProvider) || defaultProvider;

  /**
   * Records the machine and build job of every requested service that has no machine yet, in one
   * transaction, then starts those builds side by side. Idempotent per service: one that already
   * has a machine gets its build job's id. A build that could not be started is reported in its
   * result (its job stays leased, and the job loop takes it up when the lease ends). Results are
   * in the order of `reqs`.
   */
  async function provisionMany(
    reqs: ProvisionRequest[],
    waitForBuilds = true,
  ): Promise<{ serviceId: string; jobId: string; error?: unknown }[]> {
    const all = [...new Map(reqs.map((r) => [r.serviceId, r])).values()];
    const providers = new Map(all.map((r) => [r.serviceId, providerFor(newKind(r.kind))]));
    const provider = (r: ProvisionRequest) => providers.get(r.serviceId) ?? defaultProvider;
    // Read before the transaction: a driver is never called inside one.
    const hosts = await hostCapacities(drivers, [...providers.values()]);
    const { accepted, existing, refused } = await sql.begin(async (tx) => {
      const refused = await capacityRefusals(
        tx,
        all.map((r) => ({
          serviceId: r.serviceId,
          provider: provider(r),
          memoryMb: r.memoryMb || 1024,
          diskGb: r.diskGb || 20,
        })),
        hosts,
        maxMachines,
      );
      const unique = all.filter((r) => !refused.has(r.serviceId));
      const inserted = await tx<{ service_id: string }[]>`
        insert into machines (service_id, customer_id, kind, provider, hostname, location, state, has_instance, vcpus,
                              memory_mb, disk_gb, os, driver_state)
        select r.service_id, r.customer_id, r.kind, r.provider, r.hostname, r.location, 'creating', false, r.vcpus,
               r.memory_mb, r.disk_gb, r.os, r.driver_state::jsonb
        from unnest(${unique.map((r) => r.serviceId)}::uuid[], ${unique.map((r) => r.customerId)}::uuid[],
                    ${unique.map((r) => newKind(r.kind))}::text[], ${unique.map((r) => r.hostname)}::text[],
                    ${unique.map((r) => r.location || "fra1")}::text[], ${unique.map((r) => r.vcpus || 1)}::int[],
                    ${unique.map((r) => r.memoryMb || 1024)}::int[], ${unique.map((r) => r.diskGb || 20)}::int[],
                    ${unique.map((r) => r.osImageId || "ubuntu-24.04")}::text[],
                    ${unique.map((r) => driverState(provider(r), r))}::text[], ${unique.map(provider)}::text[])
          as r(service_id, customer_id, kind, hostname, location, vcpus, memory_mb, disk_gb, os, driver_state, provider)
        on conflict (service_id) do nothing returning service_id`;
      const fresh = new Set(inserted.map((r) => r.service_id));
      // The jobs in one statement, in the round trip of the read of earlier builds.
      const others = unique.filter((r) => !fresh.has(r.serviceId)).map((r) => r.serviceId);
      const [accepted, existing] = await Promise.all([
        jobs.acceptMany(
          tx,
          unique
            .filter((r) => fresh.has(r.serviceId))
            .map((r) => ({
              m: { service_id: r.serviceId, customer_id: r.customerId, provider: provider(r) },
              action: "build",
              targetState: "running",
            })),
        ),
        others.length === 0
          ? []
          : tx<{ service_id: string; id: string }[]>`
              select distinct on (service_id) service_id, id from jobs
              where service_id = any(${others}::uuid[]) and action = 'build' order by service_id, started_at`,
      ]);
      return { accepted, existing, refused };
    });
    const jobIds = new Map(existing.map((j) => [j.service_id, j.id]));
    // A machine the hosts cannot take is not built: its service stays pending in billing, which
    // asks again (with back-off) until a place is free (docs/providers.md, "Capacity").
    const errors = new Map<string, unknown>([...refused].map(([id, reason]) => [id, noCapacity(reason)]));
    if (accepted.length > 0) {
      const machines = await sql<MachineRow[]>`
        select * from machines where service_id = any(${accepted.map((j) => j.service_id)}::uuid[])`;
      const byService = new Map(machines.map((m) => [m.service_id, m]));
      // A build that the provider refuses at once is recorded failed (machine.provisioning_failed);
      // billing learns of it from that event like any other failed build, so it is no error here.
      const startable = accepted.flatMap((job) => {
        jobIds.set(job.service_id, job.id);
        const m = byService.get(job.service_id);
        if (!m) errors.set(job.service_id, new Error("the machine vanished before its build started"));
        return m ? [{ job, m }] : [];
      });
      const launched = jobs.launchMany(startable).then((failed) => {
        for (const [serviceId, err] of failed) errors.set(serviceId, err);
      });
      // Not waited for when an order waits on this answer (a provider's first step can take
      // seconds): the machines and their jobs are recorded, and a build that fails to start
      // stays leased until the job loop takes it up, as after a reported error.
      if (waitForBuilds) await launched;
    }
    return reqs.map((r) =>
      errors.has(r.serviceId)
        ? { serviceId: r.serviceId, jobId: "", error: errors.get(r.serviceId) }
        : { serviceId: r.serviceId, jobId: jobIds.get(r.serviceId) ?? "" },
    );
  }

  return {
    async describeMachines(req) {
      const customerId = callerId(req.caller);
      const ids = req.serviceIds;
      if (ids.length === 0) return { machines: [] };
      // Both reads need only the ids, so they run concurrently (one round trip of latency). The
      // addresses of another customer's services are fetched but never matched to a returned row.
      const [rows, ips] = await Promise.all([
        sql<
          MachineRow[]
        >`select * from machines where service_id in ${sql(ids)} and customer_id = ${customerId}`,
        sql<
          (IpRow & { service_id: string })[]
        >`select * from ip_addresses where service_id in ${sql(ids)} order by version, address`,
      ]);
      const ipsByService = new Map<string, IpRow[]>();
      for (const ip of ips) {
        const list = ipsByService.get(ip.service_id);
        if (list) list.push(ip);
        else ipsByService.set(ip.service_id, [ip]);
      }
      return { machines: rows.map((m) => machineSummary(m, ipsByService.get(m.service_id) ?? [])) };
    },

    async getJob(req) {
      const customerId = callerId(req.caller);
      const job = await jobRecords.get(customerId, req.jobId);
      if (!job) throw notFound("Job");
      return { job };
    },

    async listJobs(req) {
      return jobRecords.list(callerId(req.caller), req);
    },

    async listSshKeys(req) {
      const customerId = callerId(req.caller);
      const rows = await sql<SshKeyRow[]>`
        select * from ssh_keys where customer_id = ${customerId} order by created_at desc`;
      return { sshKeys: rows.map(sshKeyOf) };
    },

    async createSshKey(req) {
      const customerId = callerId(req.caller);
      const parsed = parseSshPublicKey(req.publicKey);
      if (!parsed.ok) throw badRequest("public_key", `The public key ${parsed.message}`);
      const rows = await sql<SshKeyRow[]>`
        insert into ssh_keys (id, customer_id, name, public_key, fingerprint)
        values (${newId()}, ${customerId}, ${req.name.trim()}, ${parsed.line}, ${parsed.fingerprint})
        on conflict (customer_id, fingerprint) do nothing returning *`;
      if (rows.length === 0) throw apiError("CONFLICT", "This public key is already stored");
      return { sshKey: sshKeyOf(rows[0]) };
    },

    async deleteSshKey(req) {
      const customerId = callerId(req.caller);
      const r = await sql`delete from ssh_keys where id = ${req.sshKeyId} and customer_id = ${customerId}`;
      if (r.count === 0) throw notFound("SSH key");
      return {};
    },

    async adminCreateMachine(req) {
      // The contract requires UUIDs, defined enums and no unspecified control.
      const state = instanceStates.name(req.state) ?? "running";
      const disabled = req.disabledControls.flatMap((c) => controls.name(c) ?? []);
      const built = state === "running" || state === "stopped" || state === "paused";
      const provider = defaultProvider;
      const job = await sql.begin(async (tx) => {
        await tx`insert into machines (service_id, customer_id, kind, provider, hostname, state, has_instance, vcpus, memory_mb,
                                       disk_gb, os, disabled_controls, driver_state)
          values (${req.serviceId}, ${req.customerId}, ${newKind(req.kind)}, ${provider},
                  ${req.hostname || `host-${req.serviceId.slice(-8)}`}, ${state}, ${built}, ${req.vcpus || 1},
                  ${req.memoryMb || 1024}, ${req.diskGb || 20}, ${state === "error" ? "" : "ubuntu-24.04"},
                  ${disabled}, ${driverState(provider, req)}::text::jsonb)
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
      return { machine: machineSummary(m, await ipsOf(sql, m.service_id)) };
    },

    async provision(req) {
      const [r] = await provisionMany([req]);
      if (r.error !== undefined) throw r.error;
      return { jobId: r.jobId };
    },

    async provisionBatch(req) {
      // The records and the machines are independent: applied side by side, both before the answer.
      const [results] = await Promise.all([
        // Records come with an order's own hand-over: the order answers once the builds are
        // recorded, not started.
        provisionMany(req.requests, req.records.length === 0),
        req.records.length > 0 ? applyServiceRecords(sql, req.records, "rpc") : undefined,
      ]);
      return {
        results: results.map((r) => ({
          serviceId: r.serviceId,
          jobId: r.jobId,
          error: r.error === undefined ? "" : r.error instanceof Error ? r.error.message : String(r.error),
        })),
      };
    },
  };
}
