import { createHash, randomBytes } from "node:crypto";
import type { ServiceImpl } from "@connectrpc/connect";
import type { ComputeService } from "@hb/contracts/compute/v1/compute_pb";
import { apiError, badRequest, isUuid, newId, notFound, type Sql } from "@hb/platform";
import {
  addressesFor,
  assertControllable,
  capabilitiesOf,
  type IpRow,
  ipsOf,
  type MachineRow,
  machineJson,
  ownMachine,
} from "./machines.ts";
import { type SimulatorConfig, startJob } from "./simulator.ts";
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

function statsOf(m: MachineRow) {
  const h = createHash("sha256")
    .update(m.service_id + new Date().toISOString().slice(0, 16))
    .digest();
  return {
    cpu: { vcpus: m.vcpus, usage_percent: m.state === "running" ? h[0] % 100 : 0 },
    memory: {
      total_mb: m.memory_mb,
      used_mb: m.state === "running" ? Math.floor((m.memory_mb * h[1]) / 255) : 0,
    },
    disk: { total_gb: m.disk_gb, used_gb: Math.floor((m.disk_gb * h[2]) / 510) },
    network: { rx_bytes: h.readUInt32BE(4), tx_bytes: h.readUInt32BE(8) },
    state: m.state,
  };
}

export function createHandlers(sql: Sql, sim: SimulatorConfig): Partial<ServiceImpl<typeof ComputeService>> {
  async function powerAction(
    customerId: string,
    serviceId: string,
    kind: string,
    rawAction: string,
    surface: string,
  ) {
    return sql.begin(async (tx) => {
      const m = await ownMachine(tx, customerId, serviceId, kind, true);
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
        if (!m.has_instance) throw apiError("NOT_FOUND", "The machine does not exist or its build failed");
        return out(action === "status" ? { completed: true, state: m.state, status: m.state } : statsOf(m));
      }
      assertControllable(m, "power");
      if (m.controller_fails) {
        const jobId = newId();
        await tx`insert into jobs (id, service_id, customer_id, action, status, progress, target_state, error_code, error_message, finished_at)
          values (${jobId}, ${m.service_id}, ${m.customer_id}, ${action}, 'failed', 100, ${table[action]}, 'PROVIDER_ERROR',
                  'The management controller did not complete the power action', clock_timestamp())`;
        throw apiError(
          "PROVIDER_ERROR",
          "The server's management controller did not complete the power action",
        );
      }
      const target = table[action];
      const jobId = await startJob(tx, m, action, target, sim.actionMs);
      if (sim.actionMs === 0) {
        await tx`update machines set state = ${target} where service_id = ${m.service_id}`;
        await tx`update jobs set status = 'succeeded', progress = 100, finished_at = clock_timestamp() where id = ${jobId}`;
        return out({ completed: true, job_id: jobId, state: target, status: "succeeded" });
      }
      return out({ completed: false, job_id: jobId, pending: true });
    });
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
            instanceState: m.has_instance ? m.state : "",
            hasInstance: m.has_instance,
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
      return sql.begin(async (tx) => {
        const m = await ownMachine(tx, customerId, req.serviceId, req.kind, true);
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
        const jobId = await startJob(tx, m, "reinstall", "running", sim.reinstallMs);
        return out({
          completed: false,
          job_id: jobId,
          pending: true,
          message: "Reinstall started; the disk is being erased",
        });
      });
    },

    async resetPassword(req) {
      const customerId = callerIds(req.caller);
      return sql.begin(async (tx) => {
        const m = await ownMachine(tx, customerId, req.serviceId, req.kind, true);
        assertControllable(m, "password");
        if (m.kind === "dedicated") {
          // Platform-provisioned servers are rebuilt with a generated password.
          const generated = randomBytes(12).toString("base64url");
          await tx`update machines set state = 'creating' where service_id = ${m.service_id}`;
          const jobId = await startJob(tx, m, "reinstall", "running", sim.reinstallMs);
          return out({ completed: false, job_id: jobId, pending: true, password: generated });
        }
        if (m.state !== "running")
          throw apiError("CONFLICT", "The machine must be running to reset its password");
        await tx`update machines set root_password_set_at = clock_timestamp() where service_id = ${m.service_id}`;
        const jobId = await startJob(tx, m, "password", m.state, sim.actionMs);
        return out({ completed: false, job_id: jobId, pending: true });
      });
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
          if (!m.has_instance) throw apiError("NOT_FOUND", "The machine does not exist or its build failed");
          return out(statsOf(m));
        case "os-images":
          return out({ images: m.os_images.map((id) => ({ id, name: id })) });
        case "actions":
          return out({
            backend: m.provider,
            kind: m.kind,
            actions: m.has_instance
              ? [...DISPATCH, ...Object.keys(POWER[m.kind] ?? {})].filter((a, i, all) => all.indexOf(a) === i)
              : [],
            capabilities: capabilitiesOf(m),
          });
        case "power-status":
          return out({
            state: m.has_instance ? m.state : "absent",
            power: m.state === "running" ? "on" : "off",
          });
        case "provision-status": {
          const [job] = await sql<{ action: string; status: string; progress: number }[]>`
            select action, status, progress from jobs where service_id = ${m.service_id} and action in ('build', 'reinstall')
            order by started_at desc limit 1`;
          return out({ state: m.state, job: job ?? null });
        }
        case "traffic":
          return out({ period: new Date().toISOString().slice(0, 7), ...statsOf(m).network });
        case "game":
          if (m.kind !== "game") throw apiError("BAD_REQUEST", "This is not a game service");
          return out({
            state: m.state,
            game: "minecraft",
            players: { online: 0, max: 20 },
            address: `${(await ipsOf(sql, m.service_id))[0]?.address ?? ""}:25565`,
          });
        default:
          throw badRequest("what", "unknown information");
      }
    },

    async getJob(req) {
      const customerId = callerIds(req.caller);
      if (!isUuid(req.jobId)) throw badRequest("id", "id is not a valid identifier");
      const [j] = await sql<
        {
          id: string;
          service_id: string;
          action: string;
          status: string;
          progress: number;
          error_code: string | null;
          error_message: string | null;
          started_at: Date;
          finished_at: Date | null;
        }[]
      >`select * from jobs where id = ${req.jobId} and customer_id = ${customerId}
          and (finished_at is null or finished_at > now() - interval '30 days')`;
      if (!j) throw notFound("Job");
      return out({
        id: j.id,
        action: j.action,
        resource: { type: "service", id: j.service_id },
        status: j.status,
        progress: j.progress,
        started_at: j.started_at.toISOString(),
        finished_at: j.finished_at?.toISOString() ?? null,
        error: j.error_code ? { code: j.error_code, message: j.error_message } : null,
      });
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
      await sql.begin(async (tx) => {
        await tx`insert into machines (service_id, customer_id, kind, hostname, state, has_instance, vcpus, memory_mb, disk_gb, os,
                                       disabled_controls, fail_build, controller_fails)
          values (${req.serviceId}, ${req.customerId}, ${req.kind || "vps"}, ${req.hostname || `host-${req.serviceId.slice(-8)}`},
                  ${state}, ${built}, ${req.vcpus || 1}, ${req.memoryMb || 1024}, ${req.diskGb || 20}, ${built ? "ubuntu-24.04" : ""},
                  ${req.disabledControls ? req.disabledControls.split(",").map((s) => s.trim()) : []}, ${req.failBuild},
                  ${req.controllerFails})
          on conflict (service_id) do update set state = excluded.state, has_instance = excluded.has_instance,
            disabled_controls = excluded.disabled_controls, fail_build = excluded.fail_build,
            controller_fails = excluded.controller_fails`;
        if (built) {
          for (const ip of addressesFor(req.serviceId)) {
            await tx`insert into ip_addresses (service_id, address, version, prefix_length, purpose)
              values (${req.serviceId}, ${ip.address}, ${ip.version}, ${ip.prefix_length}, ${ip.purpose}) on conflict do nothing`;
          }
        }
        if (state === "creating")
          await startJob(
            tx,
            { service_id: req.serviceId, customer_id: req.customerId },
            "build",
            "running",
            sim.buildMs,
          );
      });
      const [m] = await sql<MachineRow[]>`select * from machines where service_id = ${req.serviceId}`;
      return out(machineJson(m, await ipsOf(sql, m.service_id)));
    },

    async provision(req) {
      if (!isUuid(req.serviceId) || !isUuid(req.customerId))
        throw badRequest("service_id", "service_id and customer_id must be UUIDs");
      return sql.begin(async (tx) => {
        const inserted = await tx`
          insert into machines (service_id, customer_id, kind, hostname, location, state, has_instance, vcpus, memory_mb, disk_gb, os,
                                fail_build)
          values (${req.serviceId}, ${req.customerId}, ${req.kind || "vps"}, ${req.hostname}, ${req.location || "fra1"}, 'creating', false,
                  ${req.vcpus || 1}, ${req.memoryMb || 1024}, ${req.diskGb || 20}, ${req.osImageId || "ubuntu-24.04"},
                  ${/(^|[.-])fail([.-]|$)/.test(req.hostname)})
          on conflict (service_id) do nothing returning service_id`;
        if (inserted.length === 0) {
          const [job] = await tx<
            { id: string }[]
          >`select id from jobs where service_id = ${req.serviceId} and action = 'build' limit 1`;
          return { jobId: job?.id ?? "" };
        }
        const jobId = await startJob(
          tx,
          { service_id: req.serviceId, customer_id: req.customerId },
          "build",
          "running",
          sim.buildMs,
        );
        return { jobId };
      });
    },
  };
}
