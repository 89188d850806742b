import { apiError } from "@hb/platform";
import type {
  DriverState,
  HostCapacity,
  JobOutcome,
  JobRow,
  MachineStats,
  ProviderDriver,
} from "../driver.ts";
import type { IpRow, MachineRow } from "../machines.ts";
import {
  backupPresent,
  type CopyContext,
  type CopyPlace,
  copyName,
  copySize,
  createSteps,
  DEFAULT_COPY_DEADLINE_MS,
  dropBackups,
  importStep,
  isCopyJob,
  JobFailure,
  removeCopy,
  type Step,
} from "./backups.ts";
import { type LxdClient, LxdError, type LxdInstance, type LxdInstanceState } from "./client.ts";
import { openLxdConsole } from "./console.ts";
import { capacityOf, DEFAULT_HOST_LIMITS, type HostLimits, hasFreeDisk, surveyHosts } from "./hosts.ts";
import { goneOutcome } from "./lost.ts";
import { ensureBridge, guestFiles, ipRows, type MachineNetwork, nicDevice } from "./network.ts";
import { PASSWORD_SCRIPT, SSHD_PASSWORD_CONF, sshdPasswordConf } from "./ssh-password.ts";

export interface LxdDriverConfig {
  /** The daemons (or clusters) machines may be placed on; the first is used when one is not recorded. */
  clients: LxdClient[];
  /** os_image_id to LXD image alias; an id without an entry is used as the alias itself. */
  images: Record<string, string>;
  /** Where the SSH proxy device listens on the LXD host (127.0.0.1 keeps it on loopback). */
  proxyAddress: string;
  /**
   * The pool new root disks go on; empty or absent: BTRFS_POOL where the daemon has it (the
   * plan's disk size is enforced there), else `default`.
   */
  storagePool?: string;
  profiles: string[];
  /** Directory that receives exported backups (the default backup store). */
  backupDir: string;
  /** How long the daemon may stay unreachable during a job before the job fails. */
  unreachableFailMs: number;
  /** How long a snapshot's or backup's job may take (default DEFAULT_COPY_DEADLINE_MS). */
  copyDeadlineMs?: number;
  /** The customer's SSH public keys on file, written to root's authorized_keys on (re)build. */
  sshKeysOf(customerId: string): Promise<string[]>;
  /** A free port for a job's new SSH proxy device, reserved for the job as it is chosen. */
  allocatePort(job: JobRow): Promise<number>;
  /** Keeps a job's progress (the LXD operation it waits on) in the job row, for a restart. */
  remember(job: JobRow, progress: DriverState): Promise<void>;
  /** How much of each host machines may take (defaults: DEFAULT_HOST_LIMITS). */
  hostLimits?: HostLimits;
  /** A machine's process limit per GiB of its plan's memory (limits.processes; default 512). */
  processesPerGib?: number;
  /** Machines' private networks (network.ts); absent: machines have no network card. */
  network?: {
    /** apt's proxy inside machines, http://address:port */
    aptProxy: string;
    /** The customer's bridge on the endpoint and a free address on it, reserved for the job. */
    allocate(job: JobRow, m: MachineRow, endpoint: string): Promise<MachineNetwork>;
  };
}

/** The btrfs pool `npm run lxd:setup` makes (scripts/lxd/setup.sh): root disk sizes hold there. */
export const BTRFS_POOL = "hb-btrfs";

/** The fewest processes a machine may run, however small its plan (systemd, sshd, a shell). */
export const MIN_PROCESSES = 128;
/** How long a capacity reading is reused: a burst of orders asks LXD once. */
const CAPACITY_TTL_MS = 5000;

/** limits.processes for a plan's memory: `perGib` per GiB, at least MIN_PROCESSES. */
export const processLimit = (memoryMb: number, perGib = 512) =>
  Math.max(MIN_PROCESSES, Math.round((memoryMb / 1024) * perGib));

/** What the driver keeps in machines.driver_state once a machine is built. */
export type LxdMachineState = {
  endpoint?: string;
  /** the cluster member it runs on, when the endpoint is a cluster */
  member?: string;
  ssh_port?: number;
  /** its place on its customer's network, when the host gives machines one */
  network?: MachineNetwork;
};

/** A job's progress, kept in jobs.driver_state between calls (and across a compute restart). */
type Progress = {
  step?: number;
  /** the LXD operation the current step waits on */
  op?: string;
  endpoint?: string;
  member?: string;
  ssh_port?: number;
  /** since when (ms) the daemon has not answered */
  unreachable_since?: number;
  /** SSH ports found taken on the host and replaced */
  port_retries?: number;
  network?: MachineNetwork;
  /** a suspension's clean stop ran out of time: the stop is forced */
  forced?: boolean;
  /** steps done again after LXD failed them in passing (transientLxdFailure) */
  transient_retries?: number;
  /** when (ms) a copy's job first started an operation: its deadline counts from there */
  started_at?: number;
};

/**
 * LXD 5.0 failures of its own helper processes that say nothing of the machine: a file push or a
 * start whose forkfile/forkstart helper was not reachable yet on a busy host (seen in CI: "dial unix
 * /proc/self/fd/273/forkfile.sock: connect: no such file or directory"). The step is done again a few
 * times, a job-loop tick apart, before the job fails.
 */
export const transientLxdFailure = (message: string) =>
  /fork(file|start)\.sock|forkfile|forkstart/i.test(message);
const TRANSIENT_RETRIES = 3;

const LXD_STATES: Record<string, string> = {
  Running: "running",
  Stopped: "stopped",
  Frozen: "paused",
  Error: "error",
};

/** The instance's LXD name; instance names must be host names, so the service id, prefixed. */
export const instanceName = (serviceId: string) => `hb-${serviceId}`;

/**
 * Whether a start failed because the SSH proxy's host port is taken. LXD reports it either as
 * "address already in use" or, when its forkproxy exits before handing over the listening socket,
 * as a failure to receive the listener's fd; both name the proxy device.
 */
export const proxyPortTaken = (startError: string) =>
  /address already in use|starting proxy device/i.test(startError);
const POWER_TIMEOUT_S = 30;

/**
 * The `lxd` provider: VPSes as LXD system containers. Every job is a short list of steps; a step
 * that starts an LXD operation leaves the job running with the operation's id remembered in the
 * job row, and the next `run` asks LXD about it. See docs/providers.md.
 */
export function createLxdDriver(cfg: LxdDriverConfig) {
  const byName = new Map(cfg.clients.map((c) => [c.endpoint.name, c]));
  const clientOf = (endpoint?: string) => (endpoint && byName.get(endpoint)) || cfg.clients[0];
  const imageOf = (os: string) => cfg.images[os] ?? os;
  const cpuSamples = new Map<string, { usage: number; at: number }>();
  /** Passwords of this process's running jobs, by job id (never stored: see JobRow.secret). */
  const secrets = new Map<string, string>();

  async function run(job: JobRow, m: MachineRow) {
    const outcome = await advance(job, m, secrets.get(job.id));
    if (outcome) secrets.delete(job.id);
    return outcome;
  }

  const machineState = (m: MachineRow) => m.driver_state as LxdMachineState;

  const hostLimits = cfg.hostLimits ?? DEFAULT_HOST_LIMITS;

  const pools = new Map<string, Promise<string>>();
  /**
   * The pool an endpoint's new root disks go on: the configured one, else BTRFS_POOL where the
   * daemon has it, else `default` (a `dir` pool, where LXD cannot enforce sizes). Asked once per
   * endpoint and process; machines already built keep the pool they were made on (their root
   * device names it).
   */
  function poolOf(c: LxdClient): Promise<string> {
    if (cfg.storagePool) return Promise.resolve(cfg.storagePool);
    let pool = pools.get(c.endpoint.name);
    if (!pool) {
      pool = c.get(`/1.0/storage-pools/${BTRFS_POOL}`).then(
        () => BTRFS_POOL,
        (err: unknown) => {
          if (err instanceof LxdError && err.status === 404) return "default";
          // The daemon did not answer: asked again next time.
          pools.delete(c.endpoint.name);
          throw err;
        },
      );
      pools.set(c.endpoint.name, pool);
    }
    return pool;
  }

  /**
   * The member with the most free memory, across every configured endpoint (and cluster member),
   * among those whose storage pool has room.
   */
  async function place(): Promise<{ endpoint: string; member?: string }> {
    const hosts = (await surveyHosts(cfg.clients, poolOf)).filter((h) => hasFreeDisk(h, hostLimits));
    hosts.sort((a, b) => b.memoryTotal - b.memoryUsed - (a.memoryTotal - a.memoryUsed));
    if (!hosts[0]) throw new JobFailure("No LXD host is reachable with room to place the machine on");
    return { endpoint: hosts[0].endpoint, member: hosts[0].member };
  }

  let capacityRead: { at: number; value: Promise<ReturnType<typeof capacityOf>> } | undefined;
  /** What the hosts can hold (hosts.ts), read again at most every CAPACITY_TTL_MS. */
  function capacity() {
    if (!capacityRead || Date.now() - capacityRead.at > CAPACITY_TTL_MS) {
      capacityRead = {
        at: Date.now(),
        value: surveyHosts(cfg.clients, poolOf).then((hosts) => capacityOf(hosts, hostLimits)),
      };
    }
    return capacityRead.value;
  }

  async function instance(c: LxdClient, name: string): Promise<LxdInstance | undefined> {
    try {
      return await c.get<LxdInstance>(`/1.0/instances/${name}`);
    } catch (err) {
      if (err instanceof LxdError && err.status === 404) return undefined;
      throw err;
    }
  }

  async function pushFile(c: LxdClient, name: string, file: string, content: string, mode: string) {
    await c.send(
      "POST",
      `/1.0/instances/${name}/files?path=${encodeURIComponent(file)}`,
      Buffer.from(content),
      {
        "content-type": "application/octet-stream",
        "x-lxd-uid": "0",
        "x-lxd-gid": "0",
        "x-lxd-mode": mode,
        "x-lxd-type": "file",
        "x-lxd-write": "overwrite",
      },
    );
  }

  async function makeDir(c: LxdClient, name: string, dir: string, mode = "0700") {
    try {
      await c.send("POST", `/1.0/instances/${name}/files?path=${encodeURIComponent(dir)}`, Buffer.alloc(0), {
        "x-lxd-uid": "0",
        "x-lxd-gid": "0",
        "x-lxd-mode": mode,
        "x-lxd-type": "directory",
      });
    } catch (err) {
      if (!(err instanceof LxdError && /exist/i.test(err.message))) throw err;
    }
  }

  /** The steps of a job, given its remembered progress (placement, port). */
  function plan(job: JobRow, m: MachineRow, p: Progress, secret?: string): Step[] {
    const c = clientOf(p.endpoint ?? machineState(m).endpoint);
    const name = instanceName(m.service_id);
    const url = `/1.0/instances/${name}`;
    const status = async () => (await instance(c, name))?.status;
    const state = (action: string, force = false, timeout = POWER_TIMEOUT_S) =>
      c.submit("PUT", `${url}/state`, { action, timeout, force });

    const forceStop: Step = {
      name: "stop",
      async act() {
        const s = await status();
        return s && s !== "Stopped" ? state("stop", true) : undefined;
      },
      done: async () => (await status()) !== "Running",
    };
    const remove: Step = {
      name: "delete",
      async act() {
        return (await instance(c, name)) ? c.submit("DELETE", url) : undefined;
      },
      done: async () => !(await instance(c, name)),
    };
    const create: Step = {
      name: "create",
      async act() {
        const target = p.member ? `?target=${encodeURIComponent(p.member)}` : "";
        if (p.network) await ensureBridge(c, p.network);
        return c.submit("POST", `/1.0/instances${target}`, {
          name,
          type: "container",
          source: { type: "image", alias: imageOf(m.os) },
          profiles: cfg.profiles,
          config: {
            "limits.cpu": String(m.vcpus),
            "limits.memory": `${m.memory_mb}MiB`,
            "limits.processes": String(processLimit(m.memory_mb, cfg.processesPerGib)),
            // Each container gets a host id range of its own (sized in /etc/subuid by
            // lxd:setup): a process escaping one owns no file of another.
            "security.idmap.isolated": "true",
          },
          devices: {
            // The plan's disk is the root disk's size (a btrfs quota; the dir pool ignores it).
            root: { type: "disk", path: "/", pool: await poolOf(c), size: `${m.disk_gb}GiB` },
            ...(p.ssh_port ? { ssh: proxyDevice(p.ssh_port) } : {}),
            ...(p.network ? { eth0: nicDevice(p.network, m.service_id) } : {}),
          },
        });
      },
      done: async () => Boolean(await instance(c, name)),
    };
    const identity: Step = {
      name: "identity",
      async act() {
        await pushFile(c, name, "/etc/hostname", `${m.hostname}\n`, "0644");
        const keys = await cfg.sshKeysOf(m.customer_id);
        // A (re)built machine's sshd starts with the machine's choice (off unless chosen).
        for (const dir of ["/etc/ssh", "/etc/ssh/sshd_config.d"]) await makeDir(c, name, dir, "0755");
        await pushFile(c, name, SSHD_PASSWORD_CONF, sshdPasswordConf(m.ssh_password_login), "0644");
        await makeDir(c, name, "/root/.ssh");
        await pushFile(
          c,
          name,
          "/root/.ssh/authorized_keys",
          keys.map((k) => `${k.trim()}\n`).join(""),
          "0600",
        );
        if (p.network && cfg.network) {
          for (const dir of ["/etc/network", "/etc/apt", "/etc/apt/apt.conf.d"])
            await makeDir(c, name, dir, "0755");
          for (const f of guestFiles(p.network, cfg.network.aptProxy))
            await pushFile(c, name, f.path, f.content, f.mode);
        }
        return undefined;
      },
    };
    const start: Step = {
      name: "start",
      async act() {
        return (await status()) === "Running" ? undefined : state("start");
      },
      done: async () => (await status()) === "Running",
      async retry(err) {
        // A new container's first start failed in LXD's own helper (seen in CI with two containers
        // created in the same second: "Failed to run: … forkstart …: exit status 1"). It holds
        // nothing yet, so it is made again (a fresh create picks its id range anew) and started.
        if (
          (job.action === "build" || job.action === "reinstall") &&
          transientLxdFailure(err) &&
          (p.transient_retries ?? 0) < TRANSIENT_RETRIES
        ) {
          p.transient_retries = (p.transient_retries ?? 0) + 1;
          await cfg.remember(job, p);
          const removing = await remove.act();
          if (removing) await waitOp(c, removing);
          const creating = await create.act();
          if (creating) await waitOp(c, creating);
          await identity.act();
          return true;
        }
        // The proxy's port is free in compute's records but taken on the host (another program,
        // another platform's container): move the device to another port and start again.
        if (!p.ssh_port || !proxyPortTaken(err) || (p.port_retries ?? 0) >= 5) return false;
        p.port_retries = (p.port_retries ?? 0) + 1;
        p.ssh_port = await cfg.allocatePort(job);
        await waitOp(
          c,
          await c.submit("PATCH", url, {
            devices: { ssh: proxyDevice(p.ssh_port) },
          }),
        );
        return true;
      },
    };
    const place_: Step = {
      name: "place",
      async act() {
        const where = await place();
        p.endpoint = where.endpoint;
        p.member = where.member;
        p.ssh_port = await cfg.allocatePort(job);
        if (cfg.network) p.network = await cfg.network.allocate(job, m, where.endpoint);
        await cfg.remember(job, p);
        return undefined;
      },
    };
    const keepPlace: Step = {
      name: "place",
      async act() {
        const ms = machineState(m);
        p.endpoint = ms.endpoint ?? c.endpoint.name;
        p.member = ms.member;
        p.ssh_port = ms.ssh_port;
        p.network = ms.network;
        return undefined;
      },
    };

    const setPassword: Step = {
      name: "password",
      async act() {
        if (!secret) throw new JobFailure("The password was not applied; set it again");
        // The password travels in the exec's environment, not its command line.
        return c.submit("POST", `${url}/exec`, {
          command: ["/bin/sh", "-c", PASSWORD_SCRIPT],
          environment: {
            HB_PASSWORD: secret,
            HB_SSHD_CONF: sshdPasswordConf(m.ssh_password_login),
            PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
          },
          "wait-for-websocket": false,
          interactive: false,
          "record-output": false,
        });
      },
    };

    switch (job.action) {
      case "build":
        return [place_, create, identity, start];
      case "reinstall":
        // A password given with the reinstall is set once the new system runs.
        return [keepPlace, forceStop, remove, create, identity, start, ...(secret ? [setPassword] : [])];
      case "terminate":
        return [forceStop, remove, dropBackups(cfg.backupDir, m.service_id)];
      case "password":
        return [setPassword];
      case "snapshot_create":
      case "backup_create":
        return createSteps(copyContext(c, job, m));
      case "snapshot_revert":
        return [
          forceStop,
          { name: "restore", act: () => c.submit("PUT", url, { restore: copyName(job.copy_id ?? "") }) },
          start,
        ];
      case "backup_restore":
        return [
          backupPresent(copyContext(c, job, m)),
          keepPlace,
          forceStop,
          remove,
          importStep(
            copyContext(c, job, m),
            p.member ? `?target=${encodeURIComponent(p.member)}` : "",
            () => poolOf(c),
            async () => Boolean(await instance(c, name)),
          ),
          start,
        ];
      case "suspend":
        // A clean shutdown first; if the system does not stop within the grace window, a forced
        // stop: a suspended customer must not keep a running machine.
        return [
          {
            name: "suspend",
            async act() {
              const s = await status();
              if (!s) throw new JobFailure(`The machine's container ${name} no longer exists`);
              return s === "Stopped" ? undefined : state("stop", Boolean(p.forced), POWER_TIMEOUT_S);
            },
            done: async () => (await status()) === "Stopped",
            async retry() {
              if (p.forced) return false;
              p.forced = true;
              return true;
            },
          },
        ];
      case "unsuspend":
        return [powerStep("start", name, status, state)];
      default:
        return [powerStep(job.action, name, status, state)];
    }
  }

  /** The host port `port` on the proxy address, forwarded to the instance's port 22. */
  const proxyDevice = (port: number) => ({
    type: "proxy",
    listen: `tcp:${cfg.proxyAddress}:${port}`,
    connect: "tcp:127.0.0.1:22",
    bind: "host",
  });

  /** Where a machine's copies are kept: its instance's LXD snapshots and backups, the backup store. */
  const copyPlace = (c: LxdClient, m: MachineRow): CopyPlace => ({
    c,
    url: `/1.0/instances/${instanceName(m.service_id)}`,
    backupDir: cfg.backupDir,
    serviceId: m.service_id,
  });
  const copyContext = (c: LxdClient, job: JobRow, m: MachineRow): CopyContext => ({
    ...copyPlace(c, m),
    job,
  });

  /** A power action: LXD's state change, skipped when the instance is already where it should be. */
  function powerStep(
    action: string,
    name: string,
    status: () => Promise<string | undefined>,
    state: (action: string, force?: boolean, timeout?: number) => Promise<string>,
  ): Step {
    return {
      name: action,
      async act() {
        const s = await status();
        if (!s) throw new JobFailure(`The machine's container ${name} no longer exists`);
        switch (action) {
          case "start":
            return s === "Running" ? undefined : state("start");
          case "stop":
          case "shutdown":
            // A clean shutdown first; the forced stop comes when the grace window ends (LXD's timeout).
            return s === "Stopped" ? undefined : state("stop", false, POWER_TIMEOUT_S);
          case "poweroff":
            return s === "Stopped" ? undefined : state("stop", true);
          case "reboot":
          case "restart":
            return s === "Running" ? state("restart", false, POWER_TIMEOUT_S) : state("start");
          default:
            throw new JobFailure(`The lxd provider has no power action ${action}`);
        }
      },
    };
  }

  /** The outcome of a job whose steps have all finished. */
  async function finished(job: JobRow, m: MachineRow, p: Progress): Promise<JobOutcome> {
    const kept: LxdMachineState = {
      endpoint: p.endpoint,
      member: p.member,
      ssh_port: p.ssh_port,
      ...(p.network ? { network: p.network } : {}),
    };
    switch (job.action) {
      case "build":
      case "reinstall":
      case "backup_restore":
      case "snapshot_revert":
        return {
          ok: true,
          state: "running",
          built: job.action === "build" || job.action === "reinstall",
          addresses: await addressesOf(m, p),
          ...(p.endpoint ? { driverState: kept } : {}),
          ...(p.ssh_port ? { sshPort: p.ssh_port } : {}),
          // A reinstall deletes the instance, and its LXD snapshots with it. (A backup restore
          // brings back the snapshots the backup holds.)
          ...(job.action === "reinstall" ? { snapshotsLost: true } : {}),
        };
      case "terminate":
        return { ok: true, state: "stopped" };
      case "password":
        return { ok: true };
      case "snapshot_create":
      case "backup_create": {
        const sizeGb = await copySize(copyContext(clientOf(machineState(m).endpoint), job, m));
        return sizeGb === undefined ? { ok: true } : { ok: true, copySizeGb: sizeGb };
      }
      default:
        return { ok: true, state: job.target_state };
    }
  }

  /** Its addresses: the one given on its private network, else as LXD reports them, else the proxy's. */
  async function addressesOf(m: MachineRow, p: Progress): Promise<IpRow[]> {
    // The address it was given (the guest may not have brought it up yet).
    if (p.network) return ipRows(p.network);
    const c = clientOf(p.endpoint ?? machineState(m).endpoint);
    const s = await c.get<LxdInstanceState>(`/1.0/instances/${instanceName(m.service_id)}/state`);
    const found: IpRow[] = [];
    for (const [nic, net] of Object.entries(s.network ?? {})) {
      if (nic === "lo") continue;
      for (const a of net.addresses) {
        if (a.scope !== "global") continue;
        found.push({
          address: a.address,
          version: a.family === "inet6" ? 6 : 4,
          prefix_length: Number(a.netmask),
          purpose: found.length === 0 ? "primary" : "additional",
        });
      }
    }
    if (found.length === 0)
      found.push({ address: cfg.proxyAddress, version: 4, prefix_length: 32, purpose: "primary" });
    return found;
  }

  /** A failed job; `gone` when its instance no longer exists (destroyed or lost: lost.ts). */
  const failure = (job: JobRow, m: MachineRow, message: string, gone = false): JobOutcome =>
    job.action === "build"
      ? { ok: false, code: "BUILD_FAILED", message, destroyed: true }
      : { ok: false, code: "PROVIDER_ERROR", message, ...(gone ? goneOutcome(job.action, m) : {}) };

  /** Whether LXD says the machine's instance is gone (false when it exists or LXD cannot tell). */
  async function instanceGone(m: MachineRow, p: Progress): Promise<boolean> {
    try {
      return !(await instance(clientOf(p.endpoint ?? machineState(m).endpoint), instanceName(m.service_id)));
    } catch {
      return false;
    }
  }

  /** Removes what a failed build left behind, so a retry or a refund leaves nothing running. */
  async function cleanUp(m: MachineRow, p: Progress) {
    const c = clientOf(p.endpoint);
    const name = instanceName(m.service_id);
    try {
      const i = await instance(c, name);
      if (!i) return;
      if (i.status !== "Stopped")
        await waitOp(
          c,
          await c.submit("PUT", `/1.0/instances/${name}/state`, { action: "stop", force: true }),
        );
      await waitOp(c, await c.submit("DELETE", `/1.0/instances/${name}`));
    } catch {
      // Best effort: the reconcile pass reports what remains.
    }
  }

  async function waitOp(c: LxdClient, id: string) {
    if (id) await c.operation(id, 30);
  }

  /**
   * Advances a job: checks the operation it waits on, then runs its steps until one starts an
   * operation (the job stays running, the operation remembered) or all are done (the outcome).
   */
  async function advance(job: JobRow, m: MachineRow, secret?: string): Promise<JobOutcome | undefined> {
    const p: Progress = { ...(job.driver_state as Progress) };
    let i = p.step ?? 0;
    try {
      const steps = plan(job, m, p, secret);
      if (p.op) {
        const c = clientOf(p.endpoint ?? machineState(m).endpoint);
        if (
          isCopyJob(job.action) &&
          Date.now() - (p.started_at ?? Date.now()) > (cfg.copyDeadlineMs ?? DEFAULT_COPY_DEADLINE_MS)
        )
          throw new JobFailure(`LXD did not finish the ${job.action.split("_")[0]} in time; it was given up`);
        let op: Awaited<ReturnType<LxdClient["operation"]>> | undefined;
        try {
          op = await c.operation(p.op);
        } catch (err) {
          if (!(err instanceof LxdError && err.status === 404)) throw err;
        }
        if (op && (op.status === "Running" || op.status === "Pending")) {
          if (p.unreachable_since) {
            p.unreachable_since = undefined;
            await cfg.remember(job, p);
          }
          return undefined;
        }
        if (op && op.status !== "Success") {
          const err = op.err || op.status;
          if (!(await steps[i]?.retry?.(err))) throw new JobFailure(`LXD: ${err}`);
          // The step fixed the cause: it runs again below.
          i -= 1;
        }
        if (op && steps[i]?.name === "password" && op.metadata && op.metadata.return !== 0) {
          throw new JobFailure("The password could not be set inside the machine");
        }
        // An operation LXD no longer knows (its daemon restarted): the step's effect decides.
        const redo = !op && steps[i]?.done && !(await steps[i].done?.());
        p.op = undefined;
        if (!redo) i += 1;
      }
      for (; i < steps.length; i++) {
        const opId = await steps[i].act();
        if (opId) {
          p.step = i;
          p.op = opId;
          p.started_at ??= Date.now();
          p.unreachable_since = undefined;
          await cfg.remember(job, p);
          return undefined;
        }
      }
      return await finished(job, m, p);
    } catch (err) {
      if (
        err instanceof LxdError &&
        err.status !== 0 &&
        transientLxdFailure(err.message) &&
        (p.transient_retries ?? 0) < TRANSIENT_RETRIES
      ) {
        // The step that failed runs again at the next tick (every step's act can be done twice).
        p.transient_retries = (p.transient_retries ?? 0) + 1;
        p.step = i;
        p.op = undefined;
        await cfg.remember(job, p);
        return undefined;
      }
      if (err instanceof LxdError && err.status === 0) {
        // The daemon does not answer: the job waits for it, up to a limit.
        const since = p.unreachable_since ?? Date.now();
        if (Date.now() - since < cfg.unreachableFailMs) {
          if (!p.unreachable_since) {
            p.unreachable_since = since;
            await cfg.remember(job, p);
          }
          return undefined;
        }
        return failure(job, m, "The LXD host did not answer; the job was given up");
      }
      const message =
        err instanceof JobFailure
          ? err.message
          : err instanceof LxdError
            ? err.status === 404 && job.action !== "build"
              ? `The machine's container ${instanceName(m.service_id)} no longer exists`
              : `LXD: ${err.message}`
            : "The LXD driver failed";
      if (job.action === "build") await cleanUp(m, p);
      if (job.copy_id && (job.action === "snapshot_create" || job.action === "backup_create")) {
        // A copy that failed leaves nothing behind: an LXD snapshot or backup, a partial export.
        const c = clientOf(p.endpoint ?? machineState(m).endpoint);
        await removeCopy(
          copyPlace(c, m),
          job.action === "snapshot_create" ? "snapshot" : "backup",
          job.copy_id,
          p.op,
        ).catch(() => undefined);
      }
      // A rebuild that failed after removing the old instance leaves the machine without one.
      return failure(job, m, message, job.action !== "build" && (await instanceGone(m, p)));
    }
  }

  async function stats(m: MachineRow): Promise<MachineStats> {
    const c = clientOf(machineState(m).endpoint);
    const name = instanceName(m.service_id);
    const read = () => c.get<LxdInstanceState>(`/1.0/instances/${name}/state`);
    let s: LxdInstanceState;
    try {
      s = await read();
    } catch (err) {
      throw apiError("PROVIDER_ERROR", err instanceof LxdError ? `LXD: ${err.message}` : "LXD failed");
    }
    const now = Date.now();
    let prev = cpuSamples.get(name);
    if (!prev || now - prev.at > 300_000) {
      // No recent reading to compare with: take a second one shortly after.
      prev = { usage: s.cpu.usage, at: now };
      await new Promise((r) => setTimeout(r, 200));
      s = await read();
    }
    const at = Date.now();
    cpuSamples.set(name, { usage: s.cpu.usage, at });
    const elapsedNs = Math.max(1, (at - prev.at) * 1e6);
    const percent = Math.min(100, Math.max(0, ((s.cpu.usage - prev.usage) / elapsedNs / m.vcpus) * 100));
    let rx = 0;
    let tx = 0;
    for (const [nic, net] of Object.entries(s.network ?? {})) {
      if (nic === "lo") continue;
      rx += net.counters.bytes_received;
      tx += net.counters.bytes_sent;
    }
    return {
      cpu: { vcpus: m.vcpus, usage_percent: Math.round(percent) },
      memory: { total_mb: m.memory_mb, used_mb: Math.round(s.memory.usage / 2 ** 20) },
      disk: { total_gb: m.disk_gb, used_gb: Math.round(((s.disk?.root?.usage ?? 0) / 2 ** 30) * 100) / 100 },
      network: { rx_bytes: rx, tx_bytes: tx },
    };
  }

  const driver: ProviderDriver & {
    /** Removes a deleted snapshot from LXD, or a deleted backup from the backup store. */
    forgetCopy(m: MachineRow, collection: string, copyId: string): Promise<void>;
    capacity(): Promise<HostCapacity>;
  } = {
    name: "lxd",
    initialState: () => ({}),
    firstCheckMs: () => 500,
    capacity,
    start(job, m) {
      if (job.secret) secrets.set(job.id, job.secret);
      return run(job, m);
    },
    run,
    stats,
    async game() {
      throw apiError("PROVIDER_ERROR", "Game servers are not run by the lxd provider");
    },
    console: (m, size) =>
      openLxdConsole(clientOf(machineState(m).endpoint), instanceName(m.service_id), size),
    async forgetCopy(m, collection, copyId) {
      await removeCopy(
        copyPlace(clientOf(machineState(m).endpoint), m),
        collection === "snapshot" ? "snapshot" : "backup",
        copyId,
      );
    },
  };
  return driver;
}

export type LxdDriver = ReturnType<typeof createLxdDriver>;
export { LXD_STATES };
