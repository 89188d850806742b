import path from "node:path";
import type { Sql } from "@hb/platform";
import { z } from "zod";
import type { JobRow } from "../driver.ts";
import { rememberJobProgress } from "../jobs.ts";
import { DEFAULT_COPY_DEADLINE_MS } from "./backups.ts";
import { createLxdClient, httpsEndpoint, type LxdClient } from "./client.ts";
import { createLxdDriver } from "./driver.ts";
import { DEFAULT_HOST_LIMITS } from "./hosts.ts";
import { parsePool, proxyAddressOf } from "./network.ts";
import { allocateNetwork } from "./network-allocate.ts";

/** Compute's environment for the lxd driver (docs/providers.md). */
export const lxdConfig = {
  /** Which provider new VPSes are created on: the simulator (default) or lxd. */
  COMPUTE_DRIVER: z.enum(["simulator", "lxd"]).default("simulator"),
  /** Comma-separated: unix:/path/to/unix.socket, or https://host:8443 (a remote daemon or cluster). */
  LXD_ENDPOINTS: z.string().default("unix:/var/lib/lxd/unix.socket"),
  /** Client certificate and key files the remote daemons trust, and their server certificate. */
  LXD_CLIENT_CERT: z.string().optional(),
  LXD_CLIENT_KEY: z.string().optional(),
  LXD_SERVER_CERT: z.string().optional(),
  /** os_image_id=alias pairs, comma-separated; an image id without one is its own alias. */
  LXD_IMAGES: z.string().default(""),
  LXD_PROXY_ADDRESS: z.string().default("127.0.0.1"),
  /** The host ports SSH proxy devices listen on, first-last. */
  LXD_SSH_PORTS: z
    .string()
    .regex(/^\d+-\d+$/)
    .default("22000-22999"),
  /** The pool new root disks go on; empty: hb-btrfs where the daemon has it, else default. */
  LXD_STORAGE_POOL: z.string().default(""),
  LXD_PROFILES: z.string().default("default"),
  LXD_BACKUP_DIR: z.string().default(path.join(import.meta.dirname, "../../../../.tmp/lxd-backups")),
  LXD_UNREACHABLE_FAIL_MS: z.coerce.number().int().min(0).default(120_000),
  /** How long a snapshot's or backup's job (making or restoring it) may take before it fails. */
  LXD_COPY_DEADLINE_MS: z.coerce.number().int().min(0).default(DEFAULT_COPY_DEADLINE_MS),
  /** How often instance states are compared with LXD's (a machine stopped from outside). */
  LXD_RECONCILE_MS: z.coerce.number().int().min(100).default(10_000),
  /** Capacity (docs/providers.md): memory kept for the host, MB, and how far plans may overcommit. */
  LXD_HOST_RESERVE_MB: z.coerce.number().int().min(0).default(DEFAULT_HOST_LIMITS.reserveMb),
  LXD_MEMORY_OVERCOMMIT: z.coerce.number().positive().default(DEFAULT_HOST_LIMITS.memoryOvercommit),
  LXD_DISK_OVERCOMMIT: z.coerce.number().positive().default(DEFAULT_HOST_LIMITS.diskOvercommit),
  /** A host whose storage pool has less free space than this (GB) takes no new machine. */
  LXD_DISK_RESERVE_GB: z.coerce.number().min(0).default(DEFAULT_HOST_LIMITS.diskReserveGb),
  /** limits.processes per GiB of the plan's memory (at least MIN_PROCESSES). */
  LXD_PROCESSES_PER_GIB: z.coerce.number().int().min(1).default(512),
  /**
   * Machines' private networks: the pool (a /15 to /23, never a private range; the same as
   * lxd:setup's HB_LXD_NETWORK_SUBNET) each customer's subnet comes from. Empty: no network card.
   */
  LXD_NETWORK_POOL: z.string().default(""),
  /** The size of each customer's subnet (/24: 253 machines). */
  LXD_NETWORK_PREFIX: z.coerce.number().int().min(24).max(29).default(24),
  /** apt's proxy inside machines; empty: http://<the pool's first address>:3142 (lxd:setup's). */
  LXD_APT_PROXY: z.string().default(""),
};

export type LxdEnv = z.infer<z.ZodObject<typeof lxdConfig>>;

/** The configured endpoints' clients. */
export async function lxdClients(cfg: LxdEnv): Promise<LxdClient[]> {
  const urls = cfg.LXD_ENDPOINTS.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return Promise.all(
    urls.map(async (u) => {
      if (u.startsWith("unix:")) return createLxdClient({ name: u, socketPath: u.slice("unix:".length) });
      if (!cfg.LXD_CLIENT_CERT || !cfg.LXD_CLIENT_KEY) {
        throw new Error(`LXD endpoint ${u} needs LXD_CLIENT_CERT and LXD_CLIENT_KEY`);
      }
      return createLxdClient(
        await httpsEndpoint(u, {
          cert: cfg.LXD_CLIENT_CERT,
          key: cfg.LXD_CLIENT_KEY,
          serverCert: cfg.LXD_SERVER_CERT,
        }),
      );
    }),
  );
}

/** The lxd driver, with compute's database behind its key, port and progress needs. */
export function lxdDriverFromEnv(sql: Sql, cfg: LxdEnv, clients: LxdClient[]) {
  const [first, last] = cfg.LXD_SSH_PORTS.split("-").map(Number);
  const images = Object.fromEntries(
    cfg.LXD_IMAGES.split(",")
      .map((p) => p.trim().split("="))
      .filter((p) => p.length === 2 && p[0] && p[1]),
  );
  const remember = rememberJobProgress(sql);
  const pool = cfg.LXD_NETWORK_POOL ? parsePool(cfg.LXD_NETWORK_POOL) : undefined;
  return createLxdDriver({
    clients,
    images,
    proxyAddress: cfg.LXD_PROXY_ADDRESS,
    storagePool: cfg.LXD_STORAGE_POOL,
    profiles: cfg.LXD_PROFILES.split(",").filter(Boolean),
    backupDir: cfg.LXD_BACKUP_DIR,
    unreachableFailMs: cfg.LXD_UNREACHABLE_FAIL_MS,
    copyDeadlineMs: cfg.LXD_COPY_DEADLINE_MS,
    hostLimits: {
      reserveMb: cfg.LXD_HOST_RESERVE_MB,
      memoryOvercommit: cfg.LXD_MEMORY_OVERCOMMIT,
      diskOvercommit: cfg.LXD_DISK_OVERCOMMIT,
      diskReserveGb: cfg.LXD_DISK_RESERVE_GB,
    },
    processesPerGib: cfg.LXD_PROCESSES_PER_GIB,
    ...(pool
      ? {
          network: {
            aptProxy: cfg.LXD_APT_PROXY || `http://${proxyAddressOf(pool)}:3142`,
            allocate: (job, m, endpoint) =>
              allocateNetwork(sql, pool, cfg.LXD_NETWORK_PREFIX, job, m, endpoint),
          },
        }
      : {}),
    async sshKeysOf(customerId) {
      const rows = await sql<{ public_key: string }[]>`
        select public_key from ssh_keys where customer_id = ${customerId} order by created_at`;
      return rows.map((r) => r.public_key);
    },
    allocatePort: (job) => freeSshPort(sql, first, last, job.id),
    remember: (job: JobRow, progress) => remember(job, progress),
  });
}

/**
 * A port of the range no machine and no running job holds, picked at random among the free and
 * written into the job's progress in the same transaction; the lock makes concurrent builds (a
 * batch of orders, several replicas) choose one after another, so two never take the same port.
 */
export async function freeSshPort(sql: Sql, first: number, last: number, jobId: string): Promise<number> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext('lxd-ssh-ports'))`;
    const [row] = await tx<{ port: number }[]>`
      select p as port from generate_series(${first}::int, ${last}::int) p
      where not exists (select 1 from machines where ssh_port = p)
        and not exists (select 1 from jobs where status = 'running' and (driver_state->>'ssh_port')::int = p)
      order by random() limit 1`;
    if (!row) throw new Error(`Every SSH proxy port in ${first}-${last} is taken`);
    await tx`update jobs set driver_state = driver_state || jsonb_build_object('ssh_port', ${row.port}::int)
      where id = ${jobId}`;
    return row.port;
  });
}
