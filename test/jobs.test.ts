import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { type Account, api, eventually, newAccount, newMachine, newMember } from "./helpers.ts";
import { serviceSql } from "./support/service-db.ts";

const db = serviceSql("compute");
after(() => db.end({ timeout: 5 }));

interface WireJob {
  id: string;
  action: string;
  resource: { type: string; id: string; hostname: string };
  status: string;
  progress: number;
  started_at: string;
  finished_at: string | null;
  error: { code: string; message: string } | null;
}

async function jobs(acct: Account, query = "") {
  const r = await api("GET", `/api/v1/jobs${query}`, { key: acct.key });
  assert.equal(r.status, 200, r.text);
  return r.body.data as { jobs: WireJob[]; pagination: Record<string, number> };
}

/** Runs a power action on a VPS and waits for its job to succeed; answers the job id. */
async function power(acct: Account, serviceId: string, action: string) {
  const r = await api("POST", `/api/v1/vps/${serviceId}/${action}`, { key: acct.key });
  assert.equal(r.status, 200, r.text);
  const jobId = r.body.data.job_id as string;
  await eventually(async () => {
    const j = await api("GET", `/api/v1/jobs/${jobId}`, { key: acct.key });
    return j.body.data.status === "succeeded";
  });
  return jobId;
}

/**
 * A power action whose job is given a horizon of `seconds` (its expected finish and its due time
 * moved out together), so its progress can be watched. The simulated action takes 200 ms, so a
 * job the change misses is replaced by another; the missed ones (finished, newest first) are
 * answered too, since they appear in the job list like any other.
 */
async function slowAction(acct: Account, serviceId: string, seconds: number) {
  const missed: string[] = [];
  for (let attempt = 0; attempt < 5; attempt++) {
    const action = attempt % 2 === 0 ? "stop" : "start";
    const r = await api("POST", `/api/v1/vps/${serviceId}/${action}`, { key: acct.key });
    assert.equal(r.status, 200, r.text);
    const jobId = r.body.data.job_id as string;
    const held = await db`update compute.jobs
      set expected_at = started_at + make_interval(secs => ${seconds}),
          due_at = started_at + make_interval(secs => ${seconds})
      where id = ${jobId} and status = 'running'
        and (lease_until is null or lease_until < clock_timestamp()) returning id`;
    if (held.length) return { jobId, missed };
    await eventually(
      async () => (await api("GET", `/api/v1/jobs/${jobId}`, { key: acct.key })).body.data.finished_at,
    );
    missed.unshift(jobId);
  }
  throw new Error("no action could be slowed: the simulated actions finish before the change");
}

/** A VPS whose build fails (the simulator's failure injection); answers its service id. */
async function failedBuild(acct: Account) {
  const id = await newMachine(acct, { state: "creating", failBuild: true });
  await eventually(async () => (await jobs(acct, `?resource=${id}&state=failed`)).jobs.length === 1);
  return id;
}

describe("GET /jobs", () => {
  it("lists the customer's jobs newest first, a page at a time, with the pagination inside data", async () => {
    const acct = await newAccount();
    const vps = await newMachine(acct);
    const stop = await power(acct, vps, "stop");
    const start = await power(acct, vps, "start");
    const reboot = await power(acct, vps, "reboot");

    const all = await jobs(acct);
    assert.deepEqual(
      all.jobs.map((j) => j.id),
      [reboot, start, stop],
    );
    assert.deepEqual(all.pagination, { page: 1, limit: 20, total: 3, pages: 1 });
    // The job names its service by the machine's hostname, so a list needs no second look-up.
    const [machine] = await db<{ hostname: string }[]>`
      select hostname from compute.machines where service_id = ${vps}`;
    assert.deepEqual(all.jobs[0], {
      id: reboot,
      action: "reboot",
      resource: { type: "service", id: vps, hostname: machine?.hostname },
      status: "succeeded",
      progress: 100,
      started_at: all.jobs[0].started_at,
      finished_at: all.jobs[0].finished_at,
      error: null,
    });
    assert.ok(Date.parse(all.jobs[0].finished_at!) >= Date.parse(all.jobs[0].started_at));

    const first = await jobs(acct, "?limit=2");
    assert.deepEqual(
      first.jobs.map((j) => j.id),
      [reboot, start],
    );
    assert.deepEqual(first.pagination, { page: 1, limit: 2, total: 3, pages: 2 });
    const second = await jobs(acct, "?limit=2&page=2");
    assert.deepEqual(
      second.jobs.map((j) => j.id),
      [stop],
    );
    const beyond = await jobs(acct, "?limit=2&page=3");
    assert.deepEqual(beyond.jobs, []);
    assert.deepEqual(beyond.pagination, { page: 3, limit: 2, total: 3, pages: 2 });
  });

  it("narrows by state, by resource and by action", async () => {
    const acct = await newAccount();
    const vps = await newMachine(acct);
    const other = await newMachine(acct);
    const stop = await power(acct, vps, "stop");
    const reboot = await power(acct, other, "reboot");
    const broken = await failedBuild(acct);
    const { jobId: running, missed } = await slowAction(acct, other, 600);

    const ids = async (query: string) => (await jobs(acct, query)).jobs.map((j) => j.id);
    const [build] = await ids(`?resource=${broken}`);
    assert.deepEqual(await ids("?state=failed"), [build]);
    assert.deepEqual(await ids("?state=running"), [running]);
    assert.deepEqual(await ids("?state=succeeded"), [...missed, reboot, stop]);
    assert.deepEqual(await ids(`?resource=${vps}`), [stop]);
    assert.deepEqual(await ids(`?resource=${other}`), [running, ...missed, reboot]);
    assert.deepEqual(await ids("?action=reboot"), [reboot]);
    assert.deepEqual(await ids(`?action=reboot&resource=${vps}`), []);
    const narrowed = await jobs(acct, `?state=succeeded&resource=${other}`);
    assert.deepEqual(
      narrowed.jobs.map((j) => j.id),
      [...missed, reboot],
    );
    assert.equal(narrowed.pagination.total, 1 + missed.length);
  });

  it("reports progress from 0 towards 100 while a job runs, and 100 once it has finished", async () => {
    const acct = await newAccount();
    const vps = await newMachine(acct);
    const { jobId } = await slowAction(acct, vps, 3);
    const read = async () => {
      const [listed] = (await jobs(acct, `?resource=${vps}&limit=1`)).jobs;
      assert.equal(listed.id, jobId);
      return listed;
    };

    const early = await read();
    assert.equal(early.status, "running");
    assert.ok(early.progress >= 0 && early.progress < 50, `early progress ${early.progress}`);
    let last = early.progress;
    const midway = await eventually(async () => {
      const j = await read();
      assert.ok(j.progress >= last, `progress went back from ${last} to ${j.progress}`);
      last = j.progress;
      return j.status === "running" && j.progress >= 50 && j;
    });
    assert.ok(midway.progress < 100);
    const single = await api("GET", `/api/v1/jobs/${jobId}`, { key: acct.key });
    assert.ok(single.body.data.progress >= midway.progress);

    const done = await eventually(async () => {
      const j = await read();
      return j.status === "succeeded" && j;
    });
    assert.equal(done.progress, 100);
    assert.equal((await api("GET", `/api/v1/jobs/${jobId}`, { key: acct.key })).body.data.progress, 100);
  });

  it("shows a failed job's error, in the list and on its own", async () => {
    const acct = await newAccount();
    const broken = await failedBuild(acct);
    const [failed] = (await jobs(acct, "?state=failed")).jobs;
    assert.equal(failed.resource.id, broken);
    assert.equal(failed.action, "build");
    assert.equal(failed.progress, 100);
    assert.ok(failed.finished_at);
    assert.deepEqual(failed.error, {
      code: "BUILD_FAILED",
      message: "The hypervisor could not build the machine",
    });
    const single = await api("GET", `/api/v1/jobs/${failed.id}`, { key: acct.key });
    assert.deepEqual(single.body.data, failed);
  });

  it("never lists another customer's jobs, even by their service id", async () => {
    const mine = await newAccount();
    const theirs = await newAccount();
    const myVps = await newMachine(mine);
    const theirVps = await newMachine(theirs);
    const myJob = await power(mine, myVps, "reboot");
    await power(theirs, theirVps, "reboot");

    const listed = await jobs(mine);
    assert.deepEqual(
      listed.jobs.map((j) => j.id),
      [myJob],
    );
    assert.equal(listed.pagination.total, 1);
    const byTheirs = await jobs(mine, `?resource=${theirVps}`);
    assert.deepEqual(byTheirs.jobs, []);
    assert.equal(byTheirs.pagination.total, 0);
  });

  it("refuses an unknown state, a malformed resource id and a malformed action with 400 naming the field", async () => {
    const acct = await newAccount();
    for (const [query, field] of [
      ["?state=done", "state"],
      ["?state=RUNNING", "state"],
      ["?resource=not-a-uuid", "resource"],
      ["?action=drop%20table", "action"],
      ["?page=0", "page"],
    ]) {
      const r = await api("GET", `/api/v1/jobs${query}`, { key: acct.key });
      assert.equal(r.status, 400, `${query}: ${r.text}`);
      assert.equal(r.body.code, "BAD_REQUEST");
      assert.deepEqual(
        r.body.details.map((d: { field: string }) => d.field),
        [field],
        query,
      );
    }
  });

  it("needs the read scope and View Services, like a single job", async () => {
    const acct = await newAccount();
    const stranger = await newMember(acct.customerId, ["view_invoices"], ["read"]);
    const r = await api("GET", "/api/v1/jobs", { key: stranger.key });
    assert.equal(r.status, 403, r.text);
    assert.equal(r.body.code, "FORBIDDEN");
    const viewer = await newMember(acct.customerId, ["view_services"], ["read"]);
    assert.equal((await api("GET", "/api/v1/jobs", { key: viewer.key })).status, 200);
  });
});
