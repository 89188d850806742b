import type { ServiceImpl } from "@connectrpc/connect";
import type { ComputeService } from "@hb/contracts/hb/compute/v1/compute_pb";
import { apiError, badRequest, isUuid, newId, notFound, type Sql } from "@hb/platform";
import type { JobRow } from "./driver.ts";
import type { Jobs } from "./jobs.ts";
import { assertCapability, assertControllable, type MachineRow, ownMachine } from "./machines.ts";

interface CopyRow {
  id: string;
  name: string;
  status: string;
  size_gb: number;
  created_at: Date;
}

const copyJson = (c: CopyRow) => ({
  id: c.id,
  name: c.name,
  status: c.status,
  size_gb: c.size_gb,
  created_at: c.created_at.toISOString(),
});
const MAX_COPIES = 10;

/** Snapshots and backups: jobs like every other action, carried out by the machine's driver. */
export function createCopies(
  sql: Sql,
  { jobs }: { jobs: Jobs },
): Partial<ServiceImpl<typeof ComputeService>> {
  return {
    async manageCopies(req) {
      const customerId = req.caller?.customerId ?? "";
      const collection = req.collection === "snapshot" ? "snapshot" : "backup";
      const control = collection === "snapshot" ? "snapshots" : "backups";
      const label = collection === "snapshot" ? "Snapshot" : "Backup";
      if (req.op === "list") {
        const m = await ownMachine(sql, customerId, req.serviceId, req.kind);
        // The list is refused like the writes when the plan has the control switched off.
        assertCapability(m, control);
        const rows = await sql<
          CopyRow[]
        >`select * from copies where service_id = ${m.service_id} and collection = ${collection}
          and status <> 'deleted' order by created_at desc`;
        return { json: JSON.stringify({ [`${collection}s`]: rows.map(copyJson) }) };
      }
      // Accept under the machine's lock; the driver is asked only after it is released.
      let accepted: { job: JobRow; m: MachineRow } | undefined;
      const answer = await sql.begin(async (tx) => {
        const m = await ownMachine(tx, customerId, req.serviceId, req.kind, true);
        assertControllable(m, control);
        const copyId = req.copyId;
        if (req.op === "create") {
          const [{ n }] = await tx<
            { n: number }[]
          >`select count(*)::int as n from copies where service_id = ${m.service_id}
            and collection = ${collection} and status <> 'deleted'`;
          if (n >= MAX_COPIES)
            throw apiError("CONFLICT", `At most ${MAX_COPIES} ${collection}s per machine; delete one first`);
          const id = newId();
          const name = req.name.trim() || `${collection}-${new Date().toISOString().slice(0, 19)}`;
          await tx`insert into copies (id, service_id, customer_id, collection, name, size_gb)
            values (${id}, ${m.service_id}, ${customerId}, ${collection}, ${name}, ${Math.ceil(m.disk_gb / 4)})`;
          const job = await jobs.accept(tx, m, `${collection}_create`, m.state, id);
          accepted = { job, m };
          return {
            json: JSON.stringify({
              completed: false,
              job_id: job.id,
              pending: true,
              [collection]: { id, name, status: "creating" },
            }),
          };
        }
        if (!isUuid(copyId)) throw badRequest(`${collection}Id`, `${collection}Id is not a valid identifier`);
        const [copy] = await tx<
          CopyRow[]
        >`select * from copies where id = ${copyId} and service_id = ${m.service_id}
          and collection = ${collection} and status <> 'deleted' for update`;
        if (!copy) throw notFound(label);
        if (req.op === "delete") {
          if (copy.status !== "available") throw apiError("CONFLICT", `${label} is ${copy.status}`);
          await tx`update copies set status = 'deleted' where id = ${copy.id}`;
          return { json: JSON.stringify({ id: copy.id, deleted: true }) };
        }
        if (req.op === "revert" || req.op === "restore") {
          if (copy.status !== "available") throw apiError("CONFLICT", `${label} is ${copy.status}`);
          await tx`update copies set status = 'restoring' where id = ${copy.id}`;
          await tx`update machines set state = 'creating' where service_id = ${m.service_id}`;
          const job = await jobs.accept(tx, m, `${collection}_${req.op}`, "running", copy.id);
          accepted = { job, m };
          return { json: JSON.stringify({ completed: false, job_id: job.id, pending: true }) };
        }
        throw badRequest("op", "unknown operation");
      });
      if (accepted) {
        const outcome = await jobs.launch(accepted.job, accepted.m);
        if (outcome && !outcome.ok) throw apiError("PROVIDER_ERROR", outcome.message);
      }
      return answer;
    },
  };
}
