/**
 * The lxd driver against a real LXD daemon and the busybox image (npm run lxd:setup, npm run
 * images). Where either is missing the suite is skipped with the reason printed.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { readlink } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { before, describe, it } from "node:test";
import { eventually } from "../../../../test/support/eventually.ts";
import type { ProviderDriver } from "../driver.ts";
import { createLxdClient, type LxdClient, LxdError } from "./client.ts";
import { BTRFS_POOL, createLxdDriver, instanceName, MIN_PROCESSES, processLimit } from "./driver.ts";
import { LXD_SOCKET } from "./lxd-available.ts";
import {
  backupDir,
  build,
  built,
  driverConfig,
  driverFor,
  inside,
  job,
  KEY,
  lxc,
  machine,
  noBtrfs,
  real,
  settle,
  status,
  unavailable,
} from "./lxd-harness.ts";

/** Whether lxcfs's mount answers (a mount left by an lxcfs process that has gone does not). */
function lxcfsAnswers(): boolean {
  try {
    execFileSync("timeout", ["5", "cat", "/var/lib/lxcfs/proc/uptime"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

describe("lxd driver", { skip: unavailable }, () => {
  const d = driverFor([real]);

  // First: what reads the host as a whole, the test of creations at once, and builds by a driver
  // other than `d` (a driver makes its own creations one at a time, not another's: two drivers
  // creating at once met LXD 5.0's shared id range, and a build failed "Instance is busy running a
  // stop operation").
  describe("one at a time", () => {
    it("gives each container a host id range of its own, when several are ordered at once", async () => {
      // LXD 5.0 handed containers created at the same moment the same range, or one outside root's
      // subuid that cannot start (eight at once: seen every time before creations were serialised).
      const ms = await Promise.all(Array.from({ length: 8 }, () => built(d)));
      const bases = ms.map((m) =>
        Number(lxc("config", "get", instanceName(m.service_id), "volatile.idmap.base")),
      );
      for (const m of ms) assert.equal(await status(m), "Running");
      const sorted = [...bases].sort((x, y) => x - y);
      for (let i = 1; i < sorted.length; i++)
        assert.ok(sorted[i] - sorted[i - 1] >= 65536, `ranges overlap: ${bases.join(", ")}`);
      // Each range is inside root's subordinate ids (/etc/subuid), never the host's own.
      const [, start, count] =
        /^root:(\d+):(\d+)$/m.exec(readFileSync("/etc/subuid", "utf8"))?.map(Number) ?? [];
      for (const b of bases)
        assert.ok(b >= start && b + 65536 <= start + count, `range ${b} is outside root's subuid`);
    });

    it("reports what the host can hold: its memory less the reserve, the pool's size, and none with the pool full", async () => {
      const { memory } = await real.get<{ memory: { total: number } }>("/1.0/resources");
      const pool = await real.get<{ space: { total: number } }>("/1.0/storage-pools/default/resources");
      const c = await d.capacity();
      assert.equal(c.memoryMb, Math.floor(memory.total / 2 ** 20 - 1024));
      assert.equal(c.diskGb, Math.floor(pool.space.total / 2 ** 30));
      assert.equal(c.full, undefined);
      const tight = createLxdDriver({
        ...driverConfig([real]),
        hostLimits: { reserveMb: 0, memoryOvercommit: 2, diskOvercommit: 1, diskReserveGb: 1e9 },
      });
      const none = await tight.capacity();
      assert.match(none.full ?? "", /less than 1000000000 GB free/);
      const m = machine();
      const refused = await settle(tight, job(m, "build"), m);
      assert.equal(!refused.ok && refused.code, "BUILD_FAILED", "a host with no room takes no machine");
    });

    it("finds the LXD daemon running from a directory that exists (npm run lxd:setup sees to it)", async () => {
      // Started from a checkout removed since (a CI clone), every rsync the daemon runs fails with
      // "getcwd(): No such file or directory": each snapshot on the dir pool failed that way.
      const { environment } = await real.get<{ environment: { server_pid: number } }>("/1.0");
      const cwd = await readlink(`/proc/${environment.server_pid}/cwd`);
      assert.ok(existsSync(cwd), `the daemon's working directory is gone: ${cwd}`);
    });

    it("keeps a machine within its plan's disk on the btrfs pool, and its stats read the disk it uses", async (t) => {
      if (noBtrfs) {
        t.skip(noBtrfs);
        return;
      }
      // No pool configured: the driver takes the btrfs pool where the daemon has one.
      const auto = createLxdDriver({ ...driverConfig([real]), storagePool: "" });
      const m = await built(auto, { disk_gb: 1 });
      const i = await real.get<{ devices: Record<string, Record<string, string>> }>(
        `/1.0/instances/${instanceName(m.service_id)}`,
      );
      assert.equal(i.devices.root.pool, BTRFS_POOL);
      // 1.2 GiB written into a 1 GiB plan: the write stops at the disk's size.
      const dd = inside(
        m,
        "sh",
        "-c",
        "dd if=/dev/zero of=/root/fill bs=1M count=1229 2>&1; echo rc=$?; sync",
      );
      // Seen once in CI: the whole 1.2 GiB written. What btrfs held for the container then is printed.
      assert.doesNotMatch(dd, /rc=0$/m, `${dd}\n${quotaReport(instanceName(m.service_id))}`);
      assert.match(dd, /quota exceeded|no space left/i);
      const written = Number(inside(m, "stat", "-c", "%s", "/root/fill"));
      assert.ok(written > 0.8 * 2 ** 30 && written <= 2 ** 30, `${written} bytes written`);
      // btrfs accounts the new blocks when it commits them: the figure is waited for.
      const s = await eventually(async () => {
        const read = await auto.stats(m);
        return read.disk.used_gb >= 0.8 ? read : false;
      }, 15_000);
      assert.equal(s.disk.total_gb, 1);
      assert.ok(s.disk.used_gb <= 1.05, `${s.disk.used_gb} GB used of a 1 GB disk`);
    });

    it("moves the SSH proxy to another port when its port is taken on the host", async () => {
      const taken = net.createServer();
      await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
      const busy = (taken.address() as net.AddressInfo).port;
      try {
        const m = await built(driverFor([real], 60_000, [busy]));
        assert.notEqual(m.ssh_port, busy);
        assert.equal(
          lxc("config", "device", "get", instanceName(m.service_id), "ssh", "listen"),
          `tcp:127.0.0.1:${m.ssh_port}`,
        );
        assert.equal(await status(m), "Running");
      } finally {
        taken.close();
      }
    });

    it("makes a container again when LXD fails its creation", async () => {
      // LXD answered one creation of forty "Failed creating instance from image: readdirent …: bad
      // file descriptor" (bench:lxd); here the first creation's operation is reported so.
      const flaky = firstOperationFails(
        (method, p) => method === "POST" && p.startsWith("/1.0/instances"),
        "Failed creating instance from image: bad file descriptor",
      );
      const m = await built(driverFor([flaky.client]));
      assert.equal(flaky.seen.failed, 1, "the first creation was reported failed");
      assert.equal(await status(m), "Running");
    });

    it("makes a new container again when LXD fails its first start and refuses its delete a while, and gives it the machine's identity", async () => {
      // bench:lxd, ten at once: a new container's start failed "Failed to handle idmapped storage".
      // Reported failed here after it ran, as LXD reported a start in CI: the container is running.
      const flaky = firstOperationFails(
        isStart,
        "Failed to handle idmapped storage: Failed to change ownership of: /var/lib/lxd/storage-pools/default/containers/x/rootfs/usr/bin/env",
      );
      // CI: after the failed start LXD ran a stop of its own, and refused the delete meanwhile.
      let creations = 0;
      let refused = 0;
      const counting: LxdClient = {
        ...flaky.client,
        async submit(method, p, body, headers) {
          if (method === "POST" && p.startsWith("/1.0/instances")) creations += 1;
          if (method === "DELETE" && refused < 3) {
            refused += 1;
            throw new LxdError(
              'Failed to create instance delete operation: Instance is busy running a "stop" operation',
              400,
            );
          }
          return flaky.client.submit(method, p, body, headers);
        },
      };
      const m = await built(driverFor([counting]));
      assert.equal(flaky.seen.failed, 1, "the first start was reported failed");
      assert.equal(refused, 3, "the delete was refused three times");
      // At least twice: a real failure of LXD on a loaded host makes it once more (below).
      assert.ok(creations >= 2, `the container was made again (made ${creations} times)`);
      assert.equal(await status(m), "Running");
      assert.equal(inside(m, "cat", "/etc/hostname"), m.hostname);
    });

    it("makes a new container again when the start reported failed brings it up after the stop found it stopped", async () => {
      // bench:lxd, ten at once: the build failed "Instance is running" at its delete. Here the
      // instance reads Stopped to the stop and to the delete after the failed start, as it did
      // before it came up; the delete is refused, and the job goes back to its stop.
      const flaky = firstOperationFails(
        isStart,
        "Failed to run: forkstart hb-x /var/lib/lxd/containers: exit status 1",
      );
      let misread = 0;
      const late: LxdClient = {
        ...flaky.client,
        async get<T>(p: string) {
          const answer = await flaky.client.get<T>(p);
          if (flaky.seen.failed === 1 && misread < 2 && /^\/1\.0\/instances\/[^/?]+$/.test(p)) {
            misread += 1;
            return { ...(answer as object), status: "Stopped" } as T;
          }
          return answer;
        },
      };
      const m = await built(driverFor([late]));
      assert.equal(misread, 2, "the stop and the delete read it stopped");
      assert.equal(await status(m), "Running");
      assert.equal(inside(m, "cat", "/etc/hostname"), m.hostname);
    });

    it("goes back to its stop when LXD fails the remade container's delete operation 'Instance is running'", async () => {
      // bench:lxd, ten at once: the delete's operation failed so, the container having come up
      // after the stop. Here the delete is reported failed once, after it ran.
      const flaky = firstOperationFails(
        isStart,
        "Failed to run: forkstart hb-x /var/lib/lxd/containers: exit status 1",
      );
      let deleteOp = "";
      let refused = 0;
      let creations = 0;
      const client: LxdClient = {
        ...flaky.client,
        async submit(method, p, body, headers) {
          const id = await flaky.client.submit(method, p, body, headers);
          if (method === "POST" && p.startsWith("/1.0/instances")) creations += 1;
          if (method === "DELETE" && !deleteOp) deleteOp = id;
          return id;
        },
        async operation(id, timeoutS) {
          const first = id === deleteOp && refused === 0;
          const op = await flaky.client.operation(id, first ? 30 : timeoutS);
          if (!first) return op;
          refused += 1;
          return { ...op, status: "Failure", err: "Instance is running" };
        },
      };
      const m = await built(driverFor([client]));
      assert.equal(refused, 1, "the delete's operation was reported failed");
      // At least twice: on a loaded host LXD can fail the remade container for real too (a CI run
      // at a load average of 13 made it three times), and the driver makes it again as it should.
      assert.ok(creations >= 2, `the container was made again (made ${creations} times)`);
      assert.equal(await status(m), "Running");
    });

    it("places a build again when LXD's survey of the host fails with a bad file descriptor", async () => {
      // CI: GET /1.0/resources answered "Failed to add card info: bad file descriptor" once, and the
      // build failed at its placement.
      let failed = 0;
      const flaky: LxdClient = {
        ...real,
        async get<T>(p: string) {
          if (p.startsWith("/1.0/resources") && failed === 0) {
            failed += 1;
            throw new LxdError(
              'Failed to retrieve network information: Failed to add device information for "/sys/class/net/eth0/device": Failed to add card info: bad file descriptor',
              500,
            );
          }
          return real.get<T>(p);
        },
      };
      const m = await built(driverFor([flaky]));
      assert.equal(failed, 1, "the first survey failed");
      assert.equal(await status(m), "Running");
    });

    it("places a new machine on the endpoint with the most free memory, skipping one that does not answer", async () => {
      const small: LxdClient = {
        ...createLxdClient({ name: "small", socketPath: LXD_SOCKET }),
        get: async <T>(p: string) =>
          (p === "/1.0"
            ? { environment: { server_clustered: false } }
            : { memory: { total: 2 ** 30, used: 2 ** 29 } }) as T,
      };
      const down = createLxdClient({ name: "down", socketPath: path.join(backupDir, "nothing.socket") });
      const m = machine();
      const outcome = await settle(driverFor([small, down, real]), job(m, "build"), m);
      assert.equal(
        outcome.ok && (outcome.driverState as { endpoint: string }).endpoint,
        "local",
        JSON.stringify(outcome),
      );
    });
  });

  // One machine, built once, that these tests only read.
  describe("a built machine, read", () => {
    let base: Awaited<ReturnType<typeof build>> & { since: number };
    before(async () => {
      const since = Date.now();
      base = { ...(await build(d)), since };
    });

    it("builds a running container with the plan's limits, hostname, keys and an SSH proxy on loopback", async () => {
      const { m } = base;
      const name = instanceName(m.service_id);
      const i = await real.get<{
        status: string;
        config: Record<string, string>;
        devices: Record<string, Record<string, string>>;
      }>(`/1.0/instances/${name}`);
      assert.equal(i.status, "Running");
      assert.equal(i.config["limits.cpu"], "1");
      assert.equal(i.config["limits.memory"], "256MiB");
      assert.equal(i.config["limits.processes"], String(processLimit(256)));
      assert.equal(i.config["security.idmap.isolated"], "true");
      assert.equal(i.devices.root.size, "1GiB");
      const port = (m.driver_state as { ssh_port: number }).ssh_port;
      assert.equal(m.ssh_port, port, "the port is recorded for the VPS record");
      assert.equal(i.devices.ssh.listen, `tcp:127.0.0.1:${port}`);
      assert.equal(i.devices.ssh.connect, "tcp:127.0.0.1:22");
      assert.equal(inside(m, "cat", "/etc/hostname"), "web-1.example.com");
      assert.equal(inside(m, "hostname"), "web-1.example.com");
      assert.equal(inside(m, "cat", "/root/.ssh/authorized_keys"), KEY);
      assert.equal(inside(m, "stat", "-c", "%a", "/root/.ssh/authorized_keys"), "600");
    });

    it("answers the loopback proxy address as the machine's address where LXD reports none", async () => {
      const { outcome } = base;
      assert.deepEqual(outcome.ok && outcome.addresses, [
        { address: "127.0.0.1", version: 4, prefix_length: 32, purpose: "primary" },
      ]);
    });

    it("reads stats from LXD's instance state", async () => {
      const { m } = base;
      const s = await d.stats(m);
      assert.equal(s.cpu.vcpus, 1);
      assert.ok(s.cpu.usage_percent >= 0 && s.cpu.usage_percent <= 100);
      assert.equal(s.memory.total_mb, 256);
      assert.ok(s.memory.used_mb >= 0);
      assert.equal(s.disk.total_gb, 1);
    });

    it("shows the plan's memory and its own uptime inside (lxcfs), where the host runs lxcfs", async (t) => {
      if (!readFileSync("/proc/mounts", "utf8").includes(" fuse.lxcfs ")) {
        t.skip("lxcfs is not mounted on this host (npm run lxd:setup installs and starts it)");
        return;
      }
      if (!lxcfsAnswers()) {
        t.skip("lxcfs is mounted but its process is gone (npm run lxd:setup mounts it again)");
        return;
      }
      const { m, since } = base;
      assert.match(
        inside(m, "grep", "^MemTotal:", "/proc/meminfo"),
        new RegExp(`^MemTotal:\\s+${256 * 1024} kB$`),
      );
      const uptime = Number(inside(m, "cat", "/proc/uptime").split(" ")[0]);
      const hostUptime = Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);
      // The container's own clock: no longer than since its build began (the host's is far longer).
      const sinceBuild = (Date.now() - since) / 1000;
      assert.ok(
        uptime <= sinceBuild + 1 && uptime < hostUptime,
        `uptime ${uptime} s inside, ${sinceBuild} s since its build began, ${hostUptime} s on the host`,
      );
    });
  });

  // Each test builds a machine of its own and changes only that one. They run one after another:
  // run four at a time, LXD 5.0's daemon stopped answering in the middle of a CI run (2026-11-28,
  // quiet machine; once before under load), and every LXD test after it timed out.
  describe("a machine of its own", () => {
    it("refuses processes beyond the plan's limit (limits.processes)", async () => {
      const m = await built(d);
      const limit = processLimit(m.memory_mb);
      assert.equal(limit, MIN_PROCESSES);
      // Twice the limit asked for: the shell stops at the first fork the kernel refuses.
      assert.throws(
        () => inside(m, "sh", "-c", `for i in $(seq ${2 * limit}); do sleep 60 >/dev/null 2>&1 & done`),
        "a fork past the limit fails",
      );
      const { processes } = await real.get<{ processes: number }>(
        `/1.0/instances/${instanceName(m.service_id)}/state`,
      );
      assert.ok(processes <= limit && processes > limit / 2, `${processes} processes, the limit is ${limit}`);
    });

    it("suspends: a clean stop of a running machine; unsuspends: starts it again", async () => {
      const m = await built(d);
      assert.deepEqual(await settle(d, job(m, "suspend", { target_state: "stopped" }), m), {
        ok: true,
        state: "stopped",
      });
      assert.equal(await status(m), "Stopped");
      assert.deepEqual(await settle(d, job(m, "unsuspend"), m), { ok: true, state: "running" });
      assert.equal(await status(m), "Running");
    });

    it("stops, starts and restarts; a restart is a new boot", async () => {
      const m = await built(d);
      const bootId = () => inside(m, "cat", "/proc/sys/kernel/random/boot_id");
      const before = bootId();
      assert.deepEqual(await settle(d, job(m, "poweroff", { target_state: "stopped" }), m), {
        ok: true,
        state: "stopped",
      });
      assert.equal(await status(m), "Stopped");
      assert.deepEqual(await settle(d, job(m, "start"), m), { ok: true, state: "running" });
      assert.equal(await status(m), "Running");
      const afterStart = bootId();
      assert.notEqual(afterStart, before);
      assert.deepEqual(await settle(d, job(m, "reboot"), m), { ok: true, state: "running" });
      assert.notEqual(bootId(), afterStart);
    });

    it("starts a machine again when LXD fails the start's operation in passing (forkstart)", async () => {
      const m = await built(d);
      assert.deepEqual(await settle(d, job(m, "poweroff", { target_state: "stopped" }), m), {
        ok: true,
        state: "stopped",
      });
      // The operation is reported failed as LXD reported a revert's start in CI; the container
      // itself was started, so the step done again finds it running.
      const flaky = firstOperationFails(
        isStart,
        `Failed to run: forkstart ${instanceName(m.service_id)} /var/lib/lxd/containers: exit status 1`,
      );
      assert.deepEqual(await settle(driverFor([flaky.client]), job(m, "start"), m), {
        ok: true,
        state: "running",
      });
      assert.equal(flaky.seen.failed, 1, "the start's operation was reported failed once");
      assert.equal(await status(m), "Running");
    });

    it("sets root's password inside the container, and only while the process has it", async () => {
      const m = await built(d);
      const shadow = () => inside(m, "grep", "^root:", "/etc/shadow").split(":")[1];
      assert.equal(shadow(), "");
      assert.deepEqual(await settle(d, job(m, "password", { secret: "correct horse battery" }), m), {
        ok: true,
      });
      assert.match(shadow(), /^\$/);
      // A password job resumed without its password (a restart) fails rather than claim success.
      const lost = await settle(driverFor([real]), job(m, "password"), m);
      assert.equal(lost.ok, false);
      assert.equal(!lost.ok && lost.code, "PROVIDER_ERROR");
    });

    it("opens a login console: root's password logs in, a command's output comes back, closing ends it", async () => {
      const m = await built(d);
      assert.deepEqual(await settle(d, job(m, "password", { secret: "console pass 42" }), m), { ok: true });
      const c = await (d.console as NonNullable<ProviderDriver["console"]>)(m, { cols: 100, rows: 30 });
      let out = "";
      const reading = (async () => {
        for await (const chunk of c.output) out += Buffer.from(chunk).toString("utf8");
      })();
      await eventually(async () => /login: *$/.test(out), 20_000);
      c.write(Buffer.from("root\n"));
      await eventually(async () => /Password: *$/.test(out), 10_000);
      c.write(Buffer.from("console pass 42\n"));
      // The size the console was opened with, and arithmetic only a shell does.
      c.write(Buffer.from("stty size; echo hb-$((6*7))\n"));
      await eventually(async () => /30 100[\s\S]*hb-42/.test(out), 10_000);
      assert.doesNotMatch(out, /console pass 42/, "the password is not echoed");
      c.close();
      await reading;
    });

    /** A built machine whose /root/file read "before" when its snapshot was taken, "after" since. */
    const changedSinceSnapshot = async () => {
      const m = await built(d);
      inside(m, "sh", "-c", "echo before > /root/file");
      const copy_id = randomUUID();
      // The dir pool cannot measure a snapshot: no size is reported (the copy keeps the one it has).
      assert.deepEqual(await settle(d, job(m, "snapshot_create", { copy_id }), m), { ok: true });
      inside(m, "sh", "-c", "echo after > /root/file");
      return { m, copy_id };
    };

    it("reverts a snapshot: a file changed after it is back", async () => {
      const { m, copy_id } = await changedSinceSnapshot();
      const reverted = await settle(d, job(m, "snapshot_revert", { copy_id }), m);
      assert.equal(reverted.ok && reverted.state, "running");
      assert.equal(await status(m), "Running");
      assert.equal(inside(m, "cat", "/root/file"), "before");
      await d.forgetCopy(m, "snapshot", copy_id);
      assert.doesNotMatch(lxc("info", instanceName(m.service_id)), new RegExp(`c-${copy_id}`));
    });

    it("reverts a snapshot when LXD fails the start after the restore once: restored again, then started", async () => {
      const { m, copy_id } = await changedSinceSnapshot();
      // The start's operation is reported failed as LXD reported one in CI (the container did start).
      const flaky = firstOperationFails(
        isStart,
        "Failed to handle idmapped storage: Failed to change ownership of: /var/lib/lxd/storage-pools/default/containers/x/rootfs/usr/bin/env",
      );
      const reverted = await settle(driverFor([flaky.client]), job(m, "snapshot_revert", { copy_id }), m);
      assert.equal(reverted.ok && reverted.state, "running", JSON.stringify(reverted));
      assert.equal(flaky.seen.failed, 1, "the first start was reported failed");
      assert.equal(flaky.seen.restores, 2, "the snapshot was restored again before the second start");
      assert.equal(await status(m), "Running");
      assert.equal(inside(m, "cat", "/root/file"), "before");
      await d.forgetCopy(m, "snapshot", copy_id);
    });

    it("exports a backup to the backup directory and restores the machine from it", async () => {
      const m = await built(d);
      inside(m, "sh", "-c", "echo kept > /root/file");
      const copy_id = randomUUID();
      assert.deepEqual(await settle(d, job(m, "backup_create", { copy_id }), m), { ok: true, copySizeGb: 1 });
      assert.ok(existsSync(path.join(backupDir, `${m.service_id}-${copy_id}.tar.gz`)));
      inside(m, "sh", "-c", "echo changed > /root/file");
      const restored = await settle(d, job(m, "backup_restore", { copy_id }), m);
      assert.equal(restored.ok && restored.state, "running", JSON.stringify(restored));
      assert.equal(inside(m, "cat", "/root/file"), "kept");
    });

    it("reinstalls with the same name, limits, keys and SSH port", async () => {
      const m = await built(d);
      inside(m, "sh", "-c", "echo old > /root/file");
      const outcome = await settle(d, job(m, "reinstall", { secret: "new root password" }), m);
      assert.equal(outcome.ok && outcome.built, true, JSON.stringify(outcome));
      assert.deepEqual(outcome.ok && outcome.driverState, m.driver_state);
      assert.equal(outcome.ok && outcome.snapshotsLost, true, "its snapshots went with the old instance");
      assert.equal(inside(m, "sh", "-c", "cat /root/file 2>/dev/null || echo none"), "none");
      assert.equal(inside(m, "cat", "/root/.ssh/authorized_keys"), KEY);
      assert.equal(inside(m, "hostname"), "web-1.example.com");
      assert.match(inside(m, "grep", "^root:", "/etc/shadow").split(":")[1], /^\$/);
    });

    it("terminates: the container and its snapshots are deleted", async () => {
      const m = await built(d);
      await settle(d, job(m, "snapshot_create", { copy_id: randomUUID() }), m);
      assert.deepEqual(await settle(d, job(m, "terminate", { target_state: "stopped" }), m), {
        ok: true,
        state: "stopped",
      });
      assert.equal(await status(m), "gone");
    });

    it("resumes a job after a restart from the operation kept in the job", async () => {
      const m = machine();
      const j = job(m, "build");
      assert.equal(await d.start(j, m), undefined);
      assert.ok((j.driver_state as { op?: string }).op, "the build's operation is kept in the job");
      // A new driver (a restarted compute) with only the job row finishes the build.
      const again = driverFor([real]);
      const outcome = await eventually(async () => (await again.run(j, m)) ?? false, 30_000);
      assert.equal(outcome.ok && outcome.state, "running");
      assert.equal(await status(m), "Running");
    });
  });

  describe("failures", () => {
    it("an image alias that does not exist fails the build and leaves no container", async () => {
      const m = machine({ os: "no-such-image" });
      const outcome = await settle(d, job(m, "build"), m);
      assert.equal(outcome.ok, false);
      assert.equal(!outcome.ok && outcome.code, "BUILD_FAILED");
      assert.equal(!outcome.ok && outcome.destroyed, true);
      assert.match(!outcome.ok ? outcome.message : "", /LXD/);
      assert.equal(await status(m), "gone");
    });

    it("a reinstall onto an image alias that does not exist fails with the machine left without an instance", async () => {
      const m = await built(d);
      const outcome = await settle(d, job({ ...m, os: "no-such-image" }, "reinstall"), {
        ...m,
        os: "no-such-image",
      });
      assert.equal(outcome.ok, false);
      assert.equal(!outcome.ok && outcome.code, "PROVIDER_ERROR");
      assert.equal(
        !outcome.ok && outcome.destroyed,
        true,
        "the old instance was removed before the create failed",
      );
      assert.equal(await status(m), "gone");
    });

    it("a daemon that stops answering during a job: the job waits, then fails after the limit", async () => {
      const m = await built(d);
      // The driver reaches LXD through a socket this test can take away mid-job.
      const relay = await socketRelay();
      const flaky = driverFor([createLxdClient({ name: "local", socketPath: relay.path })], 1500);
      const j = job(m, "poweroff", { target_state: "stopped" });
      await relay.close();
      assert.equal(await flaky.start(j, m), undefined, "the job waits while the daemon is away");
      const outcome = await eventually(async () => (await flaky.run(j, m)) ?? false, 10_000);
      assert.equal(outcome.ok, false);
      assert.equal(!outcome.ok && outcome.code, "PROVIDER_ERROR");
      assert.match(!outcome.ok ? outcome.message : "", /did not answer/);
      assert.equal(await status(m), "Running");
    });

    it("a build whose only daemon does not answer waits for it, then fails after the limit", async () => {
      const down = createLxdClient({ name: "down", socketPath: path.join(backupDir, "nothing.socket") });
      const m = machine();
      const away = driverFor([down], 1500);
      const j = job(m, "build");
      assert.equal(await away.start(j, m), undefined, "placing the build waits while no daemon answers");
      const outcome = await eventually(async () => (await away.run(j, m)) ?? false, 10_000);
      assert.equal(outcome.ok, false);
      assert.match(!outcome.ok ? outcome.message : "", /did not answer/);
    });

    it("a daemon back within the limit lets the job finish", async () => {
      const m = await built(d);
      const relay = await socketRelay();
      const flaky = driverFor([createLxdClient({ name: "local", socketPath: relay.path })], 60_000);
      const j = job(m, "poweroff", { target_state: "stopped" });
      await relay.close();
      assert.equal(await flaky.start(j, m), undefined);
      await relay.open();
      const outcome = await eventually(async () => (await flaky.run(j, m)) ?? false, 20_000);
      assert.deepEqual(outcome, { ok: true, state: "stopped" });
      await relay.close();
    });
  });
});

/** A unix socket that forwards to LXD's until closed: the daemon as the driver sees it. */
async function socketRelay() {
  const file = path.join(backupDir, `relay-${randomUUID()}.socket`);
  let server: net.Server | undefined;
  const conns = new Set<net.Socket>();
  const open = () =>
    new Promise<void>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(LXD_SOCKET);
        conns.add(client);
        conns.add(upstream);
        client.pipe(upstream).pipe(client);
        const drop = () => {
          client.destroy();
          upstream.destroy();
        };
        client.on("error", drop);
        upstream.on("error", drop);
      });
      server.listen(file, resolve);
    });
  await open();
  return {
    path: file,
    open,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of conns) c.destroy();
        conns.clear();
        server ? server.close(() => resolve()) : resolve();
      }),
  };
}

/** The container's subvolume and the pool's quota groups as btrfs reports them, for a failure's message. */
function quotaReport(name: string): string {
  const pool = `/var/lib/lxd/storage-pools/${BTRFS_POOL}`;
  const run = (...args: string[]) => {
    try {
      return execFileSync("btrfs", args, { encoding: "utf8", timeout: 10_000 });
    } catch (err) {
      return `btrfs ${args.join(" ")}: ${(err as Error).message}`;
    }
  };
  return [
    run("subvolume", "show", `${pool}/containers/${name}`),
    run("qgroup", "show", "-re", "--raw", pool),
  ].join("\n");
}

/** A request to start an instance. */
const isStart = (method: string, p: string, body: unknown) =>
  method === "PUT" && p.endsWith("/state") && (body as { action?: string } | undefined)?.action === "start";

/**
 * The real client, except that the first operation started by a request `target` picks is reported
 * failed with `err`, once it has ended (LXD reports a failed operation when it is over); `seen`
 * counts those failures and the restores asked for.
 */
function firstOperationFails(target: (method: string, p: string, body: unknown) => boolean, err: string) {
  const seen = { failed: 0, restores: 0 };
  let targetOp = "";
  const client: LxdClient = {
    ...real,
    async submit(method, p, body, headers) {
      const id = await real.submit(method, p, body, headers);
      if ((body as { restore?: string } | undefined)?.restore) seen.restores += 1;
      if (!targetOp && target(method, p, body)) targetOp = id;
      return id;
    },
    async operation(id, timeoutS) {
      const first = id === targetOp && seen.failed === 0;
      const op = await real.operation(id, first ? 30 : timeoutS);
      if (!first) return op;
      seen.failed += 1;
      return { ...op, status: "Failure", err };
    },
  };
  return { client, seen };
}
