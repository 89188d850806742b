/**
 * What the real-LXD suites share (driver.test.ts, backups.test.ts): the daemon, a driver on it,
 * machine and job rows as compute would hand them, and running a job to its outcome. Containers
 * made through `machine` are removed when the suite ends. Needs `npm run lxd:setup` and
 * `npm run images`; `unavailable` says why a suite skips.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after } from "node:test";
import { reservePorts } from "../../../../scripts/ports.ts";
import { eventually } from "../../../../test/support/eventually.ts";
import type { DriverState, JobOutcome, JobRow, ProviderDriver } from "../driver.ts";
import type { MachineRow } from "../machines.ts";
import { createLxdClient, type LxdClient, LxdError } from "./client.ts";
import { BTRFS_POOL, createLxdDriver, instanceName } from "./driver.ts";
import { submitDelete, waitOp } from "./instance.ts";
import { LXD_SOCKET, lxdUnavailable } from "./lxd-available.ts";
import { TRANSIENT_RETRIES, transientLxdFailure } from "./transient.ts";

export const unavailable = await lxdUnavailable(["busybox"]);
if (unavailable) process.stderr.write(`lxd driver tests skipped: ${unavailable}\n`);

export const real = createLxdClient({ name: "local", socketPath: LXD_SOCKET });
/** Why root disk sizes cannot be tested here: the daemon has no btrfs pool (npm run lxd:setup). */
export const noBtrfs = unavailable
  ? undefined
  : await real.get(`/1.0/storage-pools/${BTRFS_POOL}`).then(
      () => undefined,
      () =>
        `LXD has no btrfs storage pool ${BTRFS_POOL} (npm run lxd:setup makes one where the kernel has btrfs and btrfs-progs installs)`,
    );
if (noBtrfs) process.stderr.write(`lxd btrfs tests skipped: ${noBtrfs}\n`);
export const backupDir = mkdtempSync(path.join(os.tmpdir(), "hb-lxd-backups-"));
export const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBfXe8w3r4V8yqkq0F6a0Gm5Nq0nO8p3xU8a6o2G3p1Z test@hb";
const made: string[] = [];

export function driverFor(clients: LxdClient[], unreachableFailMs = 60_000, ports?: number[]) {
  return createLxdDriver(driverConfig(clients, unreachableFailMs, ports));
}

export function driverConfig(clients: LxdClient[], unreachableFailMs = 60_000, ports?: number[]) {
  return {
    clients,
    images: { "busybox-os": "busybox" },
    proxyAddress: "127.0.0.1",
    storagePool: "default",
    profiles: ["default"],
    backupDir,
    unreachableFailMs,
    sshKeysOf: async () => [KEY],
    // Reserved as the test stacks' own ports are (scripts/ports.ts): a proxy on a port picked at
    // random in the pool once took the port a private stack's compute was about to bind.
    allocatePort: async () => ports?.shift() ?? (await reservePorts(1))[0],
    remember: async (job: JobRow, progress: DriverState) => {
      job.driver_state = progress;
    },
  };
}

export function machine(over: Partial<MachineRow> = {}): MachineRow {
  const service_id = randomUUID();
  made.push(instanceName(service_id));
  return {
    service_id,
    customer_id: randomUUID(),
    kind: "vps",
    provider: "lxd",
    hostname: "web-1.example.com",
    location: "fra1",
    state: "creating",
    has_instance: false,
    vcpus: 1,
    memory_mb: 256,
    disk_gb: 1,
    os: "busybox-os",
    rescue_mode: false,
    os_images: ["busybox-os"],
    disabled_controls: [],
    driver_state: {},
    ssh_port: null,
    ssh_password_login: false,
    service_status: "active",
    created_at: new Date(),
    ...over,
  };
}

export const job = (m: MachineRow, action: string, over: Partial<JobRow> = {}): JobRow => ({
  id: randomUUID(),
  service_id: m.service_id,
  customer_id: m.customer_id,
  action,
  target_state: "running",
  copy_id: null,
  claim: randomUUID(),
  driver_state: {},
  ...over,
});

/** Starts a job and asks about it, as the job loop does, until the driver answers its outcome. */
export async function settle(
  d: ProviderDriver,
  j: JobRow,
  m: MachineRow,
  timeoutMs = 30_000,
): Promise<JobOutcome> {
  const first = await d.start(j, m);
  if (first) return first;
  return eventually(async () => (await d.run(j, m)) ?? false, timeoutMs, 100);
}

/** Builds a machine and answers the row as compute would record it. */
export async function built(d: ProviderDriver, over: Partial<MachineRow> = {}): Promise<MachineRow> {
  return (await build(d, over)).m;
}

/** `built`, with the build's outcome as the driver answered it. */
export async function build(
  d: ProviderDriver,
  over: Partial<MachineRow> = {},
): Promise<{ m: MachineRow; outcome: JobOutcome }> {
  const m = machine(over);
  const outcome = await settle(d, job(m, "build"), m);
  assert.equal(outcome.ok, true, JSON.stringify(outcome));
  return {
    outcome,
    m: {
      ...m,
      state: "running",
      has_instance: true,
      driver_state: (outcome.ok && outcome.driverState) || {},
      ssh_port: (outcome.ok && outcome.sshPort) || null,
    },
  };
}

export const lxc = (...args: string[]) => execFileSync("lxc", args, { encoding: "utf8" }).trim();
/**
 * A command's output inside the container. Debian's LXD (5.0) can lose a short exec's output on a
 * busy host (canonical/lxd#11890, fixed upstream in 5.14 by #11606): the command runs and its exit
 * status is right, but stdout comes back empty (CI read /etc/hostname back as ''). So the output goes
 * to a file on the container's /dev (a small tmpfs LXD mounts, so a full root disk cannot refuse it)
 * and is read back with the file API; a non-zero exit still throws.
 */
export const inside = (m: MachineRow, ...cmd: string[]) => {
  const name = instanceName(m.service_id);
  lxc("exec", name, "--", "sh", "-c", '"$@" >/dev/.hb-exec-out', "sh", ...cmd);
  return execOutput(name);
};

/**
 * The output file `inside` wrote, read with LXD's file API. That API goes through a forkfile helper
 * LXD starts and stops on its own; on a busy host a pull can reach it as it goes ("read unix
 * @->/proc/self/fd/197/forkfile.sock: read: connection reset by peer", CI; canonical/lxd#10448), the
 * failure the driver does its own file steps again for (transient.ts). The pull is done again the
 * same way, at most TRANSIENT_RETRIES more times; any other failure is thrown at once.
 */
export function execOutput(name: string): string {
  for (let attempt = 0; ; attempt++) {
    try {
      return lxc("file", "pull", `${name}/dev/.hb-exec-out`, "-");
    } catch (err) {
      // execFileSync's message carries the command's stderr, where LXD says what failed.
      if (attempt >= TRANSIENT_RETRIES || !transientLxdFailure(String(err))) throw err;
    }
  }
}
export const status = async (m: MachineRow) => {
  try {
    return (await real.get<{ status: string }>(`/1.0/instances/${instanceName(m.service_id)}`)).status;
  } catch (err) {
    if (err instanceof LxdError && err.status === 404) return "gone";
    throw err;
  }
};

/**
 * Deletes a container the suite made with the driver's own patient delete (submitDelete): a delete
 * LXD refuses while another operation holds the instance is asked again, for up to 30 s. Any
 * failure taken as done left a stopped container behind once.
 */
async function remove(name: string) {
  try {
    await waitOp(real, (await submitDelete(real, name, 30_000)) ?? "");
  } catch (err) {
    process.stderr.write(`the LXD test harness could not remove ${name}: ${String(err)}\n`);
  }
}

after(async () => {
  if (unavailable) return;
  // Only this run's containers that are still there, a few at a time: one by one, a suite's twenty
  // took about half a minute on a busy host, most of it removing names a test had removed already.
  const there = new Set(
    (await real.get<string[]>("/1.0/instances").catch(() => made)).map((u) => u.split("/").pop()),
  );
  const left = made.filter((name) => there.has(name));
  const worker = async () => {
    for (let name = left.shift(); name; name = left.shift()) await remove(name);
  };
  await Promise.all(Array.from({ length: 4 }, worker));
});
