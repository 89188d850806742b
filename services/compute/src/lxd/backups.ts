import { mkdir, open, readdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { JobRow } from "../driver.ts";
import { type LxdClient, LxdError } from "./client.ts";

/**
 * The lxd driver's copies: snapshots (LXD instance snapshots) and backups (LXD instance backups,
 * exported to the backup directory on compute's host and removed from LXD once there). A copy's
 * job has a deadline; one that fails or runs out of time removes what it left (the LXD snapshot
 * or backup, a partial export), so nothing is left half made. See docs/providers.md.
 */

/** One step of a job (driver.ts): does its part, answering an operation id to wait on, or nothing. */
export interface Step {
  name: string;
  act(): Promise<string | undefined>;
  /** Whether the step's effect is in place: asked when its operation is gone (a daemon restart). */
  done?(): Promise<boolean>;
  /**
   * After its operation failed with this error: true to do the step again (it fixed the cause), an
   * earlier step's name to do the job again from that step, false to fail the job.
   */
  retry?(err: string): Promise<boolean | string>;
}

/** A failure whose message is the customer-safe reason a job failed. */
export class JobFailure extends Error {}

/** How long a copy's job may take before it is given up (LXD_COPY_DEADLINE_S). */
export const DEFAULT_COPY_DEADLINE_MS = 30 * 60_000;
const COPY_JOBS = new Set(["snapshot_create", "snapshot_revert", "backup_create", "backup_restore"]);
/** Whether a job is bounded by the copy deadline. */
export const isCopyJob = (action: string) => COPY_JOBS.has(action);

/** The LXD name of a copy (a snapshot, or a backup while LXD holds it). */
export const copyName = (copyId: string) => `c-${copyId}`;
/** Where a zstd-compressed backup is kept. */
export const backupFile = (dir: string, serviceId: string, copyId: string) =>
  path.join(dir, `${serviceId}-${copyId}.tar.zst`);
/** Where a gzip-compressed backup is kept (BACKUP_COMPRESSION). */
export const gzipBackupFile = (dir: string, serviceId: string, copyId: string) =>
  path.join(dir, `${serviceId}-${copyId}.tar.gz`);

const present = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  );

/** The backup's file in the store, whichever compression it was made with; undefined when missing. */
async function storedBackupFile(dir: string, serviceId: string, copyId: string) {
  for (const file of [backupFile(dir, serviceId, copyId), gzipBackupFile(dir, serviceId, copyId)])
    if (await present(file)) return file;
  return undefined;
}

const GIB = 2 ** 30;
/** Whole GB, rounded up: a copy of a few MB reads 1 GB. */
export const wholeGb = (bytes: number) => Math.ceil(bytes / GIB);

/** Where a machine's copies are kept: its instance's LXD snapshots and backups, the backup store. */
export interface CopyPlace {
  c: LxdClient;
  /** the instance's URL, /1.0/instances/{name} */
  url: string;
  backupDir: string;
  serviceId: string;
}

/** What the copy steps need of the driver: the place and the job. */
export interface CopyContext extends CopyPlace {
  job: JobRow;
}

/** Removes an LXD snapshot or backup by its URL; one that is not there is no error. */
async function dropLxdCopy(c: LxdClient, lxdPath: string) {
  try {
    const op = await c.submit("DELETE", lxdPath);
    if (op) await c.operation(op, 30);
  } catch (err) {
    if (!(err instanceof LxdError && err.status === 404)) throw err;
  }
}

/**
 * How LXD compresses a backup before it is exported: gzip at its fastest level (LXD runs the
 * algorithm as a command, so it takes gzip's arguments). A backup runs on the host beside the
 * machines it sells: one Debian machine's export (`lxc export`, LXD 5.0.2, twice each, 2026-12-01)
 * cost gzip 2.5 CPU-s in 3.9 s with `-1` against 6.4 CPU-s in 7.5 s at gzip's default level, for a
 * file 11% larger (59.6 MB against 53.7 MB); a restore unpacks either at the same cost. zstd was
 * measured cheaper still (2026-11-29) and made the default for an evening, but in one of five CI
 * runs LXD failed to restore a zstd backup that held a snapshot ("tar --zstd … backup/snapshots/…:
 * Decoding error (36): Data corruption detected"); the cause was not found, so gzip stays until it
 * is. The exported file is named by its content either way, and LXD tells the compression from it.
 */
export const BACKUP_COMPRESSION = "gzip -1";

/** zstd's frame magic, which starts every file it writes. */
const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);

/** Whether a file starts with zstd's magic. */
async function isZstd(file: string): Promise<boolean> {
  const fh = await open(file, "r");
  try {
    const head = Buffer.alloc(ZSTD_MAGIC.length);
    await fh.read(head, 0, head.length, 0);
    return head.equals(ZSTD_MAGIC);
  } finally {
    await fh.close();
  }
}

/** The steps that make a copy: an LXD snapshot, or an LXD backup exported to the backup directory. */
export function createSteps({ c, url, job, backupDir, serviceId }: CopyContext): Step[] {
  const name = copyName(job.copy_id ?? "");
  if (job.action === "snapshot_create")
    return [{ name: "snapshot", act: () => c.submit("POST", `${url}/snapshots`, { name, stateful: false }) }];
  const copyId = job.copy_id ?? "";
  return [
    {
      name: "backup",
      async act() {
        // Done again when LXD lost its operation (a daemon restart, issue 30: one crashed under
        // load): what it lists under the name may be a partial backup, so it is made afresh.
        await dropLxdCopy(c, `${url}/backups/${name}`);
        return c.submit("POST", `${url}/backups`, {
          name,
          instance_only: false,
          optimized_storage: false,
          compression_algorithm: BACKUP_COMPRESSION,
        });
      },
      done: async () => false,
    },
    {
      name: "export",
      async act() {
        await mkdir(backupDir, { recursive: true });
        // Named by what it holds once whole (gzip's; zstd's if BACKUP_COMPRESSION is zstd).
        const part = `${backupFile(backupDir, serviceId, copyId)}.part`;
        await c.download(`${url}/backups/${name}/export`, part);
        const zstd = await isZstd(part);
        await rename(part, (zstd ? backupFile : gzipBackupFile)(backupDir, serviceId, copyId));
        return c.submit("DELETE", `${url}/backups/${name}`);
      },
    },
  ];
}

/**
 * The step that makes sure the backup's file is in the store before a restore removes the
 * instance: a missing file fails the job with the machine untouched.
 */
export const backupPresent = ({ job, backupDir, serviceId }: CopyContext): Step => ({
  name: "check",
  async act() {
    if (!(await storedBackupFile(backupDir, serviceId, job.copy_id ?? "")))
      throw new JobFailure("The backup's file is missing from the backup store");
    return undefined;
  },
});

/** The step that brings a backup's instance back from the backup directory (its old one removed). */
export function importStep(
  { c, job, backupDir, serviceId }: CopyContext,
  target: string,
  pool: () => Promise<string>,
  exists: () => Promise<boolean>,
): Step {
  return {
    name: "import",
    async act() {
      // LXD tells the file's compression from its content. The file is streamed: read whole, a
      // backup took its size in compute's memory, and one over 2 GiB could not be read at all.
      const file = await storedBackupFile(backupDir, serviceId, job.copy_id ?? "");
      if (!file) throw new JobFailure("The backup's file is missing from the backup store");
      return c.upload("POST", `/1.0/instances${target}`, file, {
        "content-type": "application/octet-stream",
        "x-lxd-pool": await pool(),
      });
    },
    done: exists,
  };
}

/**
 * A new copy's size: the exported backup's file, or the snapshot as LXD measures it (btrfs
 * reports what the snapshot holds apart from the instance; the dir pool cannot tell: undefined).
 */
export async function copySize({
  c,
  url,
  job,
  backupDir,
  serviceId,
}: CopyContext): Promise<number | undefined> {
  try {
    if (job.action === "backup_create") {
      const file = await storedBackupFile(backupDir, serviceId, job.copy_id ?? "");
      return file ? wholeGb((await stat(file)).size) : undefined;
    }
    const s = await c.get<{ size?: number }>(`${url}/snapshots/${copyName(job.copy_id ?? "")}`);
    return typeof s.size === "number" && s.size >= 0 ? wholeGb(s.size) : undefined;
  } catch {
    // A size LXD cannot give leaves the recorded one; the copy itself is made.
    return undefined;
  }
}

/**
 * Removes a copy from LXD and the backup directory, whatever of it exists (best effort). When an
 * operation of the copy's job is still running (a deadline), it is given a short while to end
 * first: LXD refuses to remove a backup it is still writing.
 */
export async function removeCopy(
  ctx: CopyPlace,
  collection: "snapshot" | "backup",
  copyId: string,
  runningOp?: string,
): Promise<void> {
  const { c, url, backupDir, serviceId } = ctx;
  if (runningOp) {
    await c.submit("DELETE", `/1.0/operations/${encodeURIComponent(runningOp)}`).catch(() => undefined);
    await c.operation(runningOp, 30).catch(() => undefined);
  }
  const lxdPath = `${url}/${collection === "snapshot" ? "snapshots" : "backups"}/${copyName(copyId)}`;
  await dropLxdCopy(c, lxdPath);
  if (collection === "backup") {
    const zst = backupFile(backupDir, serviceId, copyId);
    // The export's part file bears the zstd name (createSteps) until it is named by its content.
    for (const file of [zst, `${zst}.part`, gzipBackupFile(backupDir, serviceId, copyId)])
      await rm(file, { force: true });
  }
}

/** The step that removes a terminated machine's exported backups from the backup store. */
export const dropBackups = (backupDir: string, serviceId: string): Step => ({
  name: "backups",
  async act() {
    const files = await readdir(backupDir).catch(() => [] as string[]);
    await Promise.all(
      files
        .filter((f) => f.startsWith(`${serviceId}-`))
        .map((f) => rm(path.join(backupDir, f), { force: true })),
    );
    return undefined;
  },
});
