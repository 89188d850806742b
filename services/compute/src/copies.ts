import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type Backup,
  BackupSchema,
  type Snapshot,
  SnapshotSchema,
} from "@hb/contracts/hb/compute/v1/copies_pb";
import { apiError, newId, notFound, type Sql, type TxSql } from "@hb/platform";
import { type ComputeDeps, callerId, type Handlers } from "./context.ts";
import type { JobRow } from "./driver.ts";
import { copyStatuses } from "./enums.ts";
import {
  assertCapability,
  assertControllable,
  lostMachine,
  type MachineRow,
  ownMachine,
} from "./machines.ts";

interface CopyRow {
  id: string;
  name: string;
  status: string;
  size_gb: number;
  created_at: Date;
}

const MAX_COPIES = 10;

/** The two collections of copies: snapshots (VPS only) and provider backups (any machine). */
const COLLECTIONS = {
  snapshot: { control: "snapshots", label: "Snapshot", kind: "vps", restore: "snapshot_revert" },
  backup: { control: "backups", label: "Backup", kind: "", restore: "backup_restore" },
} as const;
type Collection = keyof typeof COLLECTIONS;

const copyFields = (c: CopyRow) => ({
  id: c.id,
  name: c.name,
  status: copyStatuses.of(c.status),
  sizeGb: c.size_gb,
  createdAt: timestampFromDate(c.created_at),
});
const snapshotOf = (c: CopyRow): Snapshot => create(SnapshotSchema, copyFields(c));
const backupOf = (c: CopyRow): Backup => create(BackupSchema, copyFields(c));

/** Snapshots and backups: jobs like every other action, carried out by the machine's driver. */
export function createCopies(sql: Sql, { jobs, drivers }: ComputeDeps): Handlers {
  async function list(customerId: string, serviceId: string, collection: Collection): Promise<CopyRow[]> {
    const { control, kind } = COLLECTIONS[collection];
    const m = await ownMachine(sql, customerId, serviceId, kind);
    // The list is refused like the writes when the plan has the control switched off.
    assertCapability(m, control);
    return sql<CopyRow[]>`select * from copies where service_id = ${m.service_id}
      and collection = ${collection} and status <> 'deleted' order by created_at desc`;
  }

  /**
   * Runs `change` on the caller's controllable machine under its row lock; a job it accepts is
   * handed to the driver once the lock is released, and a provider's immediate refusal fails the
   * call (424).
   */
  async function write<T>(
    customerId: string,
    serviceId: string,
    collection: Collection,
    change: (m: MachineRow, tx: TxSql) => Promise<T & { job?: JobRow }>,
  ): Promise<T> {
    const { control, kind } = COLLECTIONS[collection];
    let launch: { job: JobRow; m: MachineRow } | undefined;
    const answer = await sql.begin(async (tx) => {
      const m = await ownMachine(tx, customerId, serviceId, kind, true);
      assertControllable(m, control);
      const r = await change(m, tx);
      if (r.job) launch = { job: r.job, m };
      return r;
    });
    if (launch) {
      const outcome = await jobs.launch(launch.job, launch.m);
      if (outcome && !outcome.ok)
        throw outcome.lost ? lostMachine() : apiError("PROVIDER_ERROR", outcome.message);
    }
    return answer as T;
  }

  async function createCopy(customerId: string, serviceId: string, collection: Collection, asked: string) {
    return write(customerId, serviceId, collection, async (m, tx) => {
      const [{ n }] = await tx<{ n: number }[]>`select count(*)::int as n from copies
        where service_id = ${m.service_id} and collection = ${collection} and status <> 'deleted'`;
      if (m.lost_at) throw lostMachine();
      if (n >= MAX_COPIES)
        throw apiError("CONFLICT", `At most ${MAX_COPIES} ${collection}s per machine; delete one first`);
      const name = asked.trim() || `${collection}-${new Date().toISOString().slice(0, 19)}`;
      const [copy] = await tx<CopyRow[]>`insert into copies (id, service_id, customer_id, collection, name)
        values (${newId()}, ${m.service_id}, ${customerId}, ${collection}, ${name})
        returning *`;
      const job = await jobs.accept(tx, m, `${collection}_create`, m.state, copy.id);
      return { copy, job };
    });
  }

  /** One available copy of the machine, locked (its id a UUID, as the contract requires). */
  async function availableCopy(
    tx: TxSql,
    m: MachineRow,
    collection: Collection,
    copyId: string,
  ): Promise<CopyRow> {
    const [copy] = await tx<CopyRow[]>`select * from copies where id = ${copyId}
      and service_id = ${m.service_id} and collection = ${collection} and status <> 'deleted' for update`;
    const { label } = COLLECTIONS[collection];
    if (!copy) throw notFound(label);
    if (copy.status !== "available") throw apiError("CONFLICT", `${label} is ${copy.status}`);
    return copy;
  }

  /** Brings the machine back to a copy: a rebuild, the machine `creating` until its job is done. */
  async function restore(customerId: string, serviceId: string, collection: Collection, copyId: string) {
    const { job } = await write(customerId, serviceId, collection, async (m, tx) => {
      const copy = await availableCopy(tx, m, collection, copyId);
      await tx`update copies set status = 'restoring' where id = ${copy.id}`;
      await tx`update machines set state = 'creating' where service_id = ${m.service_id}`;
      return { job: await jobs.accept(tx, m, COLLECTIONS[collection].restore, "running", copy.id) };
    });
    return { jobId: job.id };
  }

  return {
    async listSnapshots(req) {
      const rows = await list(callerId(req.caller), req.serviceId, "snapshot");
      return { snapshots: rows.map(snapshotOf) };
    },

    async createSnapshot(req) {
      const { copy, job } = await createCopy(callerId(req.caller), req.serviceId, "snapshot", req.name);
      return { snapshot: snapshotOf(copy), jobId: job.id };
    },

    async revertSnapshot(req) {
      return restore(callerId(req.caller), req.serviceId, "snapshot", req.snapshotId);
    },

    async deleteSnapshot(req) {
      const { m } = await write(callerId(req.caller), req.serviceId, "snapshot", async (m, tx) => {
        const copy = await availableCopy(tx, m, "snapshot", req.snapshotId);
        await tx`update copies set status = 'deleted' where id = ${copy.id}`;
        return { m };
      });
      // After the commit, with no lock held; a copy left behind goes with the instance at the end.
      await drivers[m.provider]?.forgetCopy?.(m, "snapshot", req.snapshotId).catch(() => undefined);
      return {};
    },

    async listBackups(req) {
      const rows = await list(callerId(req.caller), req.serviceId, "backup");
      return { backups: rows.map(backupOf) };
    },

    async createBackup(req) {
      const { copy, job } = await createCopy(callerId(req.caller), req.serviceId, "backup", req.name);
      return { backup: backupOf(copy), jobId: job.id };
    },

    async restoreBackup(req) {
      return restore(callerId(req.caller), req.serviceId, "backup", req.backupId);
    },
  };
}
