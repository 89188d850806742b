import type { JobRow } from "../driver.ts";
import type { MachineRow } from "../machines.ts";
import type { Step } from "./backups.ts";
import { JobFailure } from "./backups.ts";
import type { LxdContext } from "./context.ts";
import { idRangeShared } from "./id-range.ts";
import {
  DELETE_PATIENCE_MS,
  instance,
  instanceName,
  makeDir,
  pushFile,
  submitDelete,
  waitOp,
} from "./instance.ts";
import { ensureBridge, guestFiles, nicDevice } from "./network.ts";
import { POWER_TIMEOUT_S } from "./power.ts";
import { SSHD_PASSWORD_CONF, sshdPasswordConf } from "./ssh-password.ts";
import type { Progress } from "./state.ts";
import { anotherTry, instanceRunning } from "./transient.ts";

/** How many times a container is made when the id range LXD gave it is another's as well. */
const CREATE_ATTEMPTS = 3;

/** The fewest processes a machine may run, however small its plan (systemd, sshd, a shell). */
export const MIN_PROCESSES = 128;

/** limits.processes for a plan's memory: `perGib` per GiB, at least MIN_PROCESSES. */
export const processLimit = (memoryMb: number, perGib = 512) =>
  Math.max(MIN_PROCESSES, Math.round((memoryMb / 1024) * perGib));

/**
 * Whether a start failed because the SSH proxy's host port is taken. LXD reports it either as
 * "address already in use" or, when its forkproxy exits before handing over the listening socket,
 * as a failure to receive the listener's fd; both name the proxy device.
 */
export const proxyPortTaken = (startError: string) =>
  /address already in use|starting proxy device/i.test(startError);

/**
 * The steps a build, a reinstall, a restore and a revert are made of, for one job and its
 * remembered progress (placement, port), with the instance's state calls they share.
 */
export function machineSteps(d: LxdContext, job: JobRow, m: MachineRow, p: Progress) {
  // Reassigned when a build is placed: the steps after `place` in the same pass act on the daemon
  // chosen, not on the first configured one.
  let c = d.clientOf(p.endpoint ?? d.machineState(m).endpoint);
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
    act: () => submitDelete(c, name),
    done: async () => !(await instance(c, name)),
    // Running again between the stop and the delete's operation: the job goes back to its stop.
    retry: async (err) => instanceRunning(err) && anotherTry(p) && forceStop.name,
  };
  const create: Step = {
    name: "create",
    async act() {
      // Made already by this job before compute stopped (a creation is not remembered as an
      // operation: it is waited for below).
      if (await instance(c, name)) return undefined;
      const target = p.member ? `?target=${encodeURIComponent(p.member)}` : "";
      if (p.network) await ensureBridge(c, p.network);
      const body = {
        name,
        type: "container",
        source: { type: "image", alias: d.imageOf(m.os) },
        profiles: d.cfg.profiles,
        config: {
          "limits.cpu": String(m.vcpus),
          "limits.memory": `${m.memory_mb}MiB`,
          "limits.processes": String(processLimit(m.memory_mb, d.cfg.processesPerGib)),
          // Each container gets a host id range of its own (sized in /etc/subuid by
          // lxd:setup): a process escaping one owns no file of another.
          "security.idmap.isolated": "true",
        },
        devices: {
          // The plan's disk is the root disk's size (a btrfs quota; the dir pool ignores it).
          root: { type: "disk", path: "/", pool: await d.poolOf(c), size: `${m.disk_gb}GiB` },
          ...(p.ssh_port ? { ssh: d.proxyDevice(p.ssh_port) } : {}),
          ...(p.network ? { eth0: nicDevice(p.network, m.service_id) } : {}),
        },
      };
      // LXD 5.0 chooses an isolated container's id range as it creates it and does not hold off a
      // creation meanwhile: ten at once gave two pairs the same range and two a range outside
      // root's subuid (their start failed "newuidmap … not allowed"). So a compute process makes
      // one container at a time per daemon, each finished before the next (about 0.3 s on btrfs),
      // and a range another creation took as well is given up and chosen again. A creation LXD
      // failed is made again too: it holds nothing yet (seen in bench:lxd, the 26th of 40 on a
      // quiet host: "Failed creating instance from image: readdirent …/images/…/rootfs/…: bad file
      // descriptor", the next creation from the same image fine).
      return d.oneCreateAtATime(c.endpoint.name, async () => {
        for (let attempt = 1; ; attempt++) {
          const op = await c.operation(await c.submit("POST", `/1.0/instances${target}`, body), 60);
          const failed = op.status !== "Success";
          if (failed && attempt === CREATE_ATTEMPTS) throw new JobFailure(`LXD: ${op.err || op.status}`);
          if (!failed && (attempt === CREATE_ATTEMPTS || !(await idRangeShared(c, name)))) return undefined;
          // Failed, not left for the next tick: the create step done again would keep the container.
          try {
            await waitOp(c, (await submitDelete(c, name, DELETE_PATIENCE_MS)) ?? "");
          } catch (err) {
            throw new JobFailure(`LXD: ${err instanceof Error ? err.message : String(err)}`);
          }
          await new Promise((r) => setTimeout(r, 500 * attempt));
        }
      });
    },
    done: async () => Boolean(await instance(c, name)),
  };
  const identity: Step = {
    name: "identity",
    async act() {
      await pushFile(c, name, "/etc/hostname", `${m.hostname}\n`, "0644");
      const keys = await d.cfg.sshKeysOf(m.customer_id);
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
      if (p.network && d.cfg.network) {
        for (const dir of ["/etc/network", "/etc/apt", "/etc/apt/apt.conf.d"])
          await makeDir(c, name, dir, "0755");
        for (const f of guestFiles(p.network, d.cfg.network.aptProxy))
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
      // The proxy's port is free in compute's records but taken on the host (another program,
      // another platform's container): move the device to another port and start again.
      if (p.ssh_port && proxyPortTaken(err) && (p.port_retries ?? 0) < 5) {
        p.port_retries = (p.port_retries ?? 0) + 1;
        p.ssh_port = await d.cfg.allocatePort(job);
        await waitOp(
          c,
          await c.submit("PATCH", url, {
            devices: { ssh: d.proxyDevice(p.ssh_port) },
          }),
        );
        return true;
      }
      return false;
    },
  };
  /**
   * The start, for a job whose failed start leaves something to redo first: after the start's own
   * remedy (the proxy's port), the job goes back to the step named `from` and on from there, a few
   * times at most. LXD's start failures seen: "Failed to run: … forkstart …: exit status 1" (CI,
   * containers created at once) and "Failed to handle idmapped storage: Failed to change ownership
   * of …" (bench:lxd, 10 at once; CI, a revert's start: the restored files half moved to the
   * container's id range). The steps redone are ordinary steps, each operation waited for across
   * ticks: after a failed start LXD runs a stop of its own and refuses a delete meanwhile ("Instance
   * is busy running a \"stop\" operation", CI), which the job waits out (advance.ts).
   */
  const startAfter = (from: string): Step => ({
    ...start,
    async retry(err) {
      if (await start.retry?.(err)) return true;
      return anotherTry(p) && from;
    },
  });
  const place_: Step = {
    name: "place",
    async act() {
      const where = await d.place();
      p.endpoint = where.endpoint;
      p.member = where.member;
      c = d.clientOf(p.endpoint);
      p.ssh_port = await d.cfg.allocatePort(job);
      if (d.cfg.network) p.network = await d.cfg.network.allocate(job, m, where.endpoint);
      await d.cfg.remember(job, p);
      return undefined;
    },
  };
  const keepPlace: Step = {
    name: "place",
    async act() {
      const ms = d.machineState(m);
      p.endpoint = ms.endpoint ?? c.endpoint.name;
      p.member = ms.member;
      p.ssh_port = ms.ssh_port;
      p.network = ms.network;
      return undefined;
    },
  };

  return {
    c,
    name,
    url,
    status,
    state,
    forceStop,
    remove,
    create,
    identity,
    start,
    place: place_,
    keepPlace,
    /**
     * A new container's start: a failed one makes the container again (it holds nothing yet), from
     * the stop, since a start LXD reports failed may have started it (forkstart, in CI).
     */
    startNew: startAfter(forceStop.name),
    startAfter,
  };
}
