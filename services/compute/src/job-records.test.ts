/**
 * The job list's statement against the real PostgreSQL, in a schema of its own filled with many
 * customers' jobs: the plan the database picks for it.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { JobStatus } from "@hb/contracts/hb/compute/v1/jobs_pb";
import type { Sql } from "@hb/platform";
import { createJobRecords, listQuery } from "./job-records.ts";
import { migratedSchema, type TestSchema } from "./test-schema.ts";

interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Relation Name"?: string;
  Plans?: PlanNode[];
}
const nodesOf = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodesOf)];

describe("the job list statement", () => {
  let db: TestSchema | undefined;
  let sql: Sql;
  const customers = Array.from({ length: 40 }, () => randomUUID());

  before(async () => {
    db = await migratedSchema("job_records");
    sql = db.sql;
    // 40 customers with 250 jobs each over 5 services, a minute apart: enough rows that reading
    // the whole table costs more than the index.
    await sql.unsafe(
      `insert into jobs (id, service_id, customer_id, action, status, started_at, due_at, expected_at, finished_at)
       select gen_random_uuid(), c.services[1 + n % 5], c.id, (array['stop', 'start', 'reboot'])[1 + n % 3],
              case when n % 10 = 0 then 'failed' else 'succeeded' end,
              now() - make_interval(mins => n), now(), now(), now() - make_interval(mins => n) + interval '1 second'
       from (select id::uuid, array[gen_random_uuid(), gen_random_uuid(), gen_random_uuid(),
                                    gen_random_uuid(), gen_random_uuid()] as services
             from unnest($1::text[]) as id) c
       cross join generate_series(1, 250) as n`,
      [customers],
    );
    await sql.unsafe("analyze jobs");
  });
  after(() => db?.drop());

  const filter = { status: JobStatus.UNSPECIFIED, serviceId: "", action: "", page: 2, limit: 20 };

  it("counts and pages one customer's jobs through jobs_customer_started, never reading the whole table", async () => {
    for (const f of [filter, { ...filter, status: JobStatus.FAILED, action: "stop" }]) {
      const [text, params] = listQuery(customers[7], f);
      const [row] = await sql.unsafe<{ "QUERY PLAN": { Plan: PlanNode }[] }[]>(
        `explain (format json) ${text}`,
        params,
      );
      const nodes = nodesOf(row["QUERY PLAN"][0].Plan);
      assert.deepEqual(
        nodes.filter((n) => n["Node Type"] === "Seq Scan").map((n) => n["Relation Name"]),
        [],
      );
      assert.equal(
        nodes.filter((n) => n["Index Name"] === "jobs_customer_started").length,
        2,
        "the count and the page both walk the index",
      );
    }
  });

  it("answers the second page of the newest jobs and the total", async () => {
    const { jobs, total } = await createJobRecords(sql).list(customers[7], filter);
    assert.equal(total, 250);
    assert.equal(jobs.length, 20);
    const starts = jobs.map((j) => Number(j.startedAt?.seconds));
    assert.deepEqual(
      starts,
      [...starts].sort((a, b) => b - a),
    );
  });
});
