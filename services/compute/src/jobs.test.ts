/**
 * The job machinery with an injected provider driver, against the real PostgreSQL in a schema of
 * its own (the running compute service never sees these machines or jobs).
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { create, fromBinary } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { ProductKind } from "@hb/contracts/hb/billing/v1/common_pb";
import { PowerAction } from "@hb/contracts/hb/compute/v1/actions_pb";
import {
  AdminCreateMachineRequestSchema,
  CreateBackupRequestSchema,
  CreateSnapshotRequestSchema,
  DescribeMachinesRequestSchema,
  GetJobRequestSchema,
  ListBackupsRequestSchema,
  ProvisionRequestSchema,
  ReinstallRequestSchema,
  ResetPasswordRequestSchema,
  RestoreBackupRequestSchema,
  RevertSnapshotRequestSchema,
  RunPowerActionRequestSchema,
} from "@hb/contracts/hb/compute/v1/compute_pb";
import { CopyStatus } from "@hb/contracts/hb/compute/v1/copies_pb";
import { JobStatus } from "@hb/contracts/hb/compute/v1/jobs_pb";
import { InstanceState, MachineKind } from "@hb/contracts/hb/compute/v1/machines_pb";
import { ProvisionBatchRequestSchema } from "@hb/contracts/hb/compute/v1/provisioning_pb";
import { EventSchema } from "@hb/contracts/hb/events/v1/events_pb";
import { CallerSchema } from "@hb/contracts/hb/platform/v1/caller_pb";
import { connectDb, createLogger, migrate, resolveError, type Sql } from "@hb/platform";
import postgres from "postgres";
import { countWireRoundTrips, type WireCounter } from "../../../scripts/bench/wire-round-trips.ts";
import { eventually } from "../../../test/support/eventually.ts";
import type { JobRow, ProviderDriver } from "./driver.ts";
import { createHandlers } from "./handlers.ts";
import { createJobs, rememberJobProgress } from "./jobs.ts";
import { freeSshPort } from "./lxd/config.ts";
import { addressesFor, type MachineRow } from "./machines.ts";
import { SERVICE_RECORD_EVENT } from "./service-records.ts";

const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const schema = `compute_jobs_test_${process.pid}_${Date.now().toString(36)}`;
const ctx = {} as HandlerContext;

/** Row locks or an open transaction on the compute pool seen while the driver runs. */
const violations: string[] = [];
const calls: string[] = [];
let observer: Sql;
/** While set, counting starts afresh as the driver answers: what follows is compute's recording. */
let wire: WireCounter | undefined;

async function checkNothingHeld(phase: string, job: JobRow) {
  calls.push(`${phase} ${job.action}`);
  const open = await observer`select count(*)::int as n from pg_stat_activity
    where application_name = ${schema} and state like 'idle in transaction%'`;
  if (open[0].n > 0) violations.push(`${phase} ${job.action}: a transaction is open`);
  try {
    await observer.begin(async (tx) => {
      await tx.unsafe(`select 1 from "${schema}".machines where service_id = $1 for update nowait`, [
        job.service_id,
      ]);
      await tx.unsafe(`select 1 from "${schema}".jobs where id = $1 for update nowait`, [job.id]);
    });
  } catch (err) {
    violations.push(`${phase} ${job.action}: ${(err as Error).message}`);
  }
}

/** While set, a "stalled" build's first step waits for it: a provider whose first call takes seconds. */
let stallGate: Promise<void> = Promise.resolve();
let stalledStarts = 0;

/** A provider with none of the simulator's habits: every job it is given succeeds. */
const probe: ProviderDriver = {
  name: "probe",
  initialState: () => ({ vm: "none yet" }),
  firstCheckMs: () => 0,
  async start(job) {
    await checkNothingHeld("start", job);
    wire?.reset();
    return undefined;
  },
  async run(job, m: MachineRow) {
    await checkNothingHeld("run", job);
    wire?.reset();
    if (job.action === "build" || job.action === "reinstall")
      return { ok: true, state: "running", built: true, addresses: addressesFor(m.service_id) };
    return { ok: true, state: job.target_state };
  },
  stats: async (m) => ({
    cpu: { vcpus: m.vcpus, usage_percent: 0 },
    memory: { total_mb: m.memory_mb, used_mb: 0 },
    disk: { total_gb: m.disk_gb, used_gb: 0 },
    network: { rx_bytes: 0, tx_bytes: 0 },
  }),
  game: async () => ({ game: "none", players: { online: 0, max: 0 } }),
};

/** What the keeper driver was handed: passwords as `start` saw them. */
const secretsSeen: (string | undefined)[] = [];
let keeperSql: Sql;

/** A driver like lxd: keeps progress in the job, places the machine, forwards an SSH port. */
const keeper: ProviderDriver = {
  ...probe,
  name: "keeper",
  async start(job) {
    secretsSeen.push(job.secret);
    await rememberJobProgress(keeperSql)(job, { op: `op-${job.action}` });
    return undefined;
  },
  async run(job, m) {
    assert.deepEqual(job.driver_state, { op: `op-${job.action}` }, "the progress kept at start");
    assert.equal(job.secret, undefined, "a password is never read back from the job row");
    if (job.action === "reinstall")
      return {
        ok: true,
        state: "running",
        built: true,
        addresses: addressesFor(m.service_id),
        driverState: { endpoint: "east" },
        sshPort: 22123,
        snapshotsLost: true,
      };
    return { ok: true, state: job.target_state };
  },
};

/**
 * A driver whose copies are made with a measured size, or fail when the machine's driver state
 * says so (as an LXD backup past its deadline does).
 */
const copier: ProviderDriver = {
  ...probe,
  name: "copier",
  async run(job, m) {
    if (!job.copy_id) return probe.run(job, m);
    if ((m.driver_state as { fail?: boolean }).fail)
      return { ok: false, code: "PROVIDER_ERROR", message: "LXD did not finish the backup in time" };
    return job.action.endsWith("_create") ? { ok: true, copySizeGb: 3 } : { ok: true, state: "running" };
  },
};

/** Power actions the vanisher driver was asked to start. */
const vanisherStarts: string[] = [];
/** A driver whose machines' instances were deleted behind its back: power finds them lost. */
const vanisher: ProviderDriver = {
  ...probe,
  name: "vanisher",
  async start(job) {
    if (job.action === "reinstall") return undefined;
    vanisherStarts.push(job.action);
    return {
      ok: false,
      code: "PROVIDER_ERROR",
      message: "The machine's container no longer exists",
      lost: true,
    };
  },
  run: (job, m) => probe.run(job, m),
};

/** A driver whose jobs run on and are asked about again 150 ms later; `quiet` does not say when. */
const patient: ProviderDriver = {
  ...probe,
  name: "patient",
  start: async () => undefined,
  run: async () => undefined,
  recheckMs: () => 150,
};
const quiet: ProviderDriver = { ...patient, name: "quiet", recheckMs: undefined };

/** The machine's state each job of the witness driver found when it was run: "action state". */
const witnessed: string[] = [];
const witness: ProviderDriver = {
  ...probe,
  name: "witness",
  start: async () => undefined,
  async run(job, m) {
    witnessed.push(`${job.action} ${m.state}`);
    return { ok: true, state: job.target_state };
  },
};

/** The probe's answers without its checks: every build succeeds, and nothing is asked of PostgreSQL. */
const quick: ProviderDriver = {
  ...probe,
  name: "quick",
  start: async () => undefined,
  run: async (job, m) =>
    job.action === "build"
      ? { ok: true, state: "running", built: true, addresses: addressesFor(m.service_id) }
      : { ok: true, state: job.target_state },
};

const stalled: ProviderDriver = {
  ...probe,
  name: "stalled",
  async start(job, m) {
    stalledStarts++;
    await stallGate;
    return probe.start(job, m);
  },
};

describe("jobs with a provider driver other than the simulator", () => {
  let sql: Sql;
  let jobs: ReturnType<typeof createJobs>;
  let compute: ReturnType<typeof createHandlers>;
  const customerId = randomUUID();
  const caller = create(CallerSchema, { customerId });

  /** Runs the job loop until no job is left running. */
  async function drain() {
    for (let i = 0; i < 20; i++) {
      await jobs.tick();
      const [{ n }] = await sql<
        { n: number }[]
      >`select count(*)::int as n from jobs where status = 'running'`;
      if (n === 0) return;
    }
    assert.fail("jobs still running after 20 passes");
  }

  /** A machine the probe driver built, then handed to `provider`: its service id. */
  async function builtThenOn(provider: string, hostname: string) {
    const serviceId = randomUUID();
    await compute.provision!(
      create(ProvisionRequestSchema, { serviceId, customerId, kind: MachineKind.VPS, hostname }),
      ctx,
    );
    await drain();
    await sql`update machines set provider = ${provider} where service_id = ${serviceId}`;
    return serviceId;
  }

  before(async () => {
    sql = connectDb(url, schema, 4);
    observer = postgres(url, { max: 1, onnotice: () => {} });
    await migrate(
      sql,
      schema,
      new URL("./db/migrations", import.meta.url).pathname,
      createLogger("test", "error"),
    );
    keeperSql = sql;
    const drivers = { probe, keeper, copier, vanisher, stalled, patient, quiet, quick, witness };
    jobs = createJobs(sql, "jobs-test", drivers);
    const deps = { jobs, drivers, defaultProvider: "probe" };
    compute = createHandlers(sql, deps);
  });
  after(async () => {
    await sql?.unsafe(`drop schema if exists "${schema}" cascade`);
    await sql?.end({ timeout: 5 });
    await observer?.end({ timeout: 5 });
  });

  it("answers an order's ProvisionBatch once its builds are recorded, before the provider's first step has ended", async () => {
    const slowFirst = createHandlers(sql, { jobs, drivers: { stalled }, defaultProvider: "stalled" });
    let release = () => {};
    stallGate = new Promise((r) => {
      release = r;
    });
    const startsBefore = stalledStarts;
    const request = (serviceId: string) =>
      create(ProvisionRequestSchema, { serviceId, customerId, kind: MachineKind.VPS, hostname: "slow-1" });
    try {
      // An order's hand-over carries the services' records; the answer does not wait for the build.
      const ordered = randomUUID();
      const record = create(EventSchema, {
        id: randomUUID(),
        type: SERVICE_RECORD_EVENT,
        occurredAt: timestampNow(),
        payload: {
          case: "serviceRecord",
          value: { service: { id: ordered, customerId, kind: ProductKind.VPS, createdAt: timestampNow() } },
        },
      });
      // A deadline, not a wait: without the behaviour the answer would come only after release().
      const answer = await Promise.race([
        Promise.resolve(
          slowFirst.provisionBatch!(
            create(ProvisionBatchRequestSchema, { requests: [request(ordered)], records: [record] }),
            ctx,
          ),
        ),
        new Promise<never>((_, reject) =>
          setTimeout(
            () => reject(new Error("ProvisionBatch waited for the provider's first step")),
            10_000,
          ).unref(),
        ),
      ]);
      const [result] = answer.results ?? [];
      assert.equal(result?.error, "");
      assert.ok(result?.jobId, "the build job is recorded");
      await eventually(async () => stalledStarts > startsBefore, 10_000, 10);
      const [job] = await sql<{ status: string }[]>`select status from jobs where id = ${result.jobId}`;
      assert.equal(job.status, "running", "answered while the provider's first step is still under way");

      // A batch without records (staff, a retry) waits for its builds' first steps, as before.
      // Once the first step is entered, nothing but the gate is left before an answer (no I/O):
      // the order of the two events says whether the answer waited for the release.
      const events: string[] = [];
      const asked = slowFirst.provisionBatch!(
        create(ProvisionBatchRequestSchema, { requests: [request(randomUUID())] }),
        ctx,
      );
      const waiting = Promise.resolve(asked).finally(() => events.push("answered"));
      await eventually(async () => stalledStarts > startsBefore + 1, 10_000, 10);
      events.push("released");
      release();
      assert.equal((await waiting).results?.[0]?.error, "");
      assert.deepEqual(events, ["released", "answered"], "it waits while the first step is held");
    } finally {
      release();
      stallGate = Promise.resolve();
    }
  });

  it("builds a host named fail-over-1: the simulator's failure hooks are not compute's", async () => {
    const serviceId = randomUUID();
    await compute.provision!(
      create(ProvisionRequestSchema, {
        serviceId,
        customerId,
        kind: MachineKind.VPS,
        hostname: "fail-over-1",
      }),
      ctx,
    );
    await drain();
    const { machines = [] } = await compute.describeMachines!(
      create(DescribeMachinesRequestSchema, { caller, serviceIds: [serviceId] }),
      ctx,
    );
    assert.equal(machines[0].instance?.state, InstanceState.RUNNING);
    assert.equal(machines[0].provider, "probe");
    const [m] = await sql<MachineRow[]>`select * from machines where service_id = ${serviceId}`;
    assert.deepEqual(m.driver_state, { vm: "none yet" });
    const columns = await sql<{ column_name: string }[]>`select column_name from information_schema.columns
      where table_schema = ${schema} and table_name = 'machines'`;
    assert.deepEqual(
      columns.map((c) => c.column_name).filter((c) => /fail/.test(c)),
      [],
      "no column of the machines table is about the simulator's failures",
    );
  });

  it("calls the driver with no transaction open and no lock on the machine or the job, at every call site", async () => {
    violations.length = 0;
    calls.length = 0;
    const vps = randomUUID();
    const dedicated = randomUUID();
    await compute.provision!(
      create(ProvisionRequestSchema, { serviceId: vps, customerId, kind: MachineKind.VPS, hostname: "a" }),
      ctx,
    );
    await compute.adminCreateMachine!(
      create(AdminCreateMachineRequestSchema, {
        serviceId: dedicated,
        customerId,
        kind: MachineKind.DEDICATED,
        state: InstanceState.CREATING,
      }),
      ctx,
    );
    await drain();
    const steps: [string, () => unknown][] = [
      [
        "power",
        () =>
          compute.runPowerAction!(
            create(RunPowerActionRequestSchema, { caller, serviceId: vps, action: PowerAction.STOP }),
            ctx,
          ),
      ],
      [
        "reinstall",
        () =>
          compute.reinstall!(
            create(ReinstallRequestSchema, {
              caller,
              serviceId: vps,
              kind: MachineKind.VPS,
              imageId: "debian-12",
            }),
            ctx,
          ),
      ],
      [
        "password",
        () =>
          compute.resetPassword!(
            create(ResetPasswordRequestSchema, {
              caller,
              serviceId: vps,
              kind: MachineKind.VPS,
              password: "correct horse",
            }),
            ctx,
          ),
      ],
      [
        "dedicated password",
        () =>
          compute.resetPassword!(
            create(ResetPasswordRequestSchema, { caller, serviceId: dedicated, kind: MachineKind.DEDICATED }),
            ctx,
          ),
      ],
      [
        "snapshot",
        () => compute.createSnapshot!(create(CreateSnapshotRequestSchema, { caller, serviceId: vps }), ctx),
      ],
    ];
    for (const [label, step] of steps) {
      await step();
      await drain();
      assert.ok(calls.length > 0, label);
    }
    const [snapshot] = await sql<{ id: string }[]>`select id from copies where service_id = ${vps}`;
    await compute.revertSnapshot!(
      create(RevertSnapshotRequestSchema, { caller, serviceId: vps, snapshotId: snapshot.id }),
      ctx,
    );
    await drain();
    for (const action of ["build", "stop", "reinstall", "password", "snapshot_create", "snapshot_revert"]) {
      assert.ok(calls.includes(`start ${action}`), `start ${action} in ${calls.join(", ")}`);
      assert.ok(calls.includes(`run ${action}`), `run ${action}`);
    }
    assert.deepEqual(violations, []);
    const [v] = await sql<MachineRow[]>`select * from machines where service_id = ${vps}`;
    assert.equal(v.state, "running", "the revert brought the machine back up");
  });

  // Each round trip costs compute and PostgreSQL a system call on each side: the statements of a
  // step that do not wait on each other's answers go together.
  it("records a build in 5 round trips to PostgreSQL and gives a lease back in 1", async () => {
    const serviceId = randomUUID();
    await compute.provision!(
      create(ProvisionRequestSchema, { serviceId, customerId, kind: MachineKind.VPS, hostname: "counted" }),
      ctx,
    );
    wire = countWireRoundTrips();
    try {
      // The job is due at once: one pass claims it, asks the driver and records the build.
      // begin; the job's and the machine's locks; the addresses, the machine and the addresses'
      // read; the event and the job; commit.
      assert.equal(await jobs.tick(), 1);
      assert.equal(wire.count, 5, "a build's outcome");
      const [m] = await sql<MachineRow[]>`select * from machines where service_id = ${serviceId}`;
      const job = await sql.begin((tx) => jobs.accept(tx, m, "stop", "stopped"));
      assert.equal(await jobs.launch(job, m), undefined);
      assert.equal(wire.count, 1, "a lease given back to the loop");
    } finally {
      wire.stop();
      wire = undefined;
    }
    const [build] = await sql<{ status: string }[]>`select status from jobs
      where service_id = ${serviceId} and action = 'build'`;
    assert.equal(build.status, "succeeded");
    const [stop] = await sql<{ claim: string | null; status: string }[]>`select claim, status from jobs
      where service_id = ${serviceId} and action = 'stop'`;
    assert.deepEqual(stop, { claim: null, status: "running" }, "left to the loop, leased to no one");
    const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from ip_addresses
      where service_id = ${serviceId}`;
    assert.equal(n, addressesFor(serviceId).length);
    const events = (await sql<{ payload: Buffer }[]>`select payload from outbox`)
      .map(({ payload }) => fromBinary(EventSchema, payload))
      .flatMap((e) => (e.payload.case === "machine" ? [{ type: e.type, ...e.payload.value }] : []))
      .filter((e) => e.serviceId === serviceId);
    assert.deepEqual(
      events.map((e) => [e.type, e.success, e.serverIp]),
      [["machine.provisioned", true, addressesFor(serviceId).find((a) => a.version === 4)?.address]],
      "the event names the address just recorded",
    );
    await drain();
  });

  it("records the builds one pass claims together: ten in 7 round trips, each with its addresses, its state and its event", async () => {
    /** Ten builds due, then one pass over them: their ids and the pass's round trips. */
    const passOfTen = async () => {
      const ids: string[] = Array.from({ length: 10 }, () => randomUUID());
      for (const [i, serviceId] of ids.entries())
        await compute.provision!(
          create(ProvisionRequestSchema, {
            serviceId,
            customerId,
            kind: MachineKind.VPS,
            hostname: `batch-${i}`,
          }),
          ctx,
        );
      // Their driver asks PostgreSQL nothing itself (the probe's checks would count too).
      await sql`update machines set provider = 'quick' where service_id = any(${ids}::uuid[])`;
      const counter = countWireRoundTrips();
      try {
        assert.equal(await jobs.tick(), 10);
        return { ids, count: counter.count };
      } finally {
        counter.stop();
      }
    };
    // A connection of the pool describes a statement the first time it runs it, in a round trip of
    // its own: passes until one ran on connections that had prepared its statements.
    let pass = await passOfTen();
    for (let attempt = 1; pass.count !== 7 && attempt < 6; attempt++) pass = await passOfTen();
    // The claim; one read of the ten machines before their drivers are asked, none after; then
    // begin; the jobs' and the machines' locks; the addresses, the machines and the addresses'
    // read; the events and the jobs; commit. One by one it was 1 + 10 × (1 + 5).
    assert.equal(pass.count, 7, "a pass of ten builds");
    const { ids } = pass;
    const machines = await sql<MachineRow[]>`select * from machines where service_id = any(${ids}::uuid[])`;
    assert.deepEqual(
      machines.map((m) => [m.state, m.has_instance]),
      ids.map(() => ["running", true]),
    );
    const builds = await sql<{ status: string; claim: string | null }[]>`select status, claim from jobs
      where service_id = any(${ids}::uuid[]) and action = 'build'`;
    assert.deepEqual(
      [...builds],
      ids.map(() => ({ status: "succeeded", claim: null })),
    );
    const ips = await sql<{ service_id: string; address: string }[]>`select service_id, address
      from ip_addresses where service_id = any(${ids}::uuid[]) order by service_id, version, address`;
    assert.deepEqual(
      ips.map((r) => `${r.service_id} ${r.address}`),
      [...ids]
        .sort()
        .flatMap((id) =>
          [...addressesFor(id)]
            .sort((a, b) => a.version - b.version || a.address.localeCompare(b.address))
            .map((a) => `${id} ${a.address}`),
        ),
    );
    const events = (await sql<{ payload: Buffer }[]>`select payload from outbox`)
      .map(({ payload }) => fromBinary(EventSchema, payload))
      .flatMap((e) => (e.payload.case === "machine" ? [{ type: e.type, ...e.payload.value }] : []))
      .filter((e) => ids.includes(e.serviceId));
    assert.deepEqual(
      events.map((e) => [e.serviceId, e.type, e.success, e.serverIp, e.hostname]).sort(),
      ids
        .map((id, i) => [
          id,
          "machine.provisioned",
          true,
          addressesFor(id).find((a) => a.version === 4)?.address,
          `batch-${i}`,
        ])
        .sort(),
    );
    assert.deepEqual(violations, []);
  });

  it("runs a machine's second job of a pass after the first is recorded, so its driver sees the first's state", async () => {
    const serviceId = await builtThenOn("witness", "twice");
    const [m] = await sql<MachineRow[]>`select * from machines where service_id = ${serviceId}`;
    // Both due at once (the witness asks for no wait), the stop accepted first.
    await sql.begin(async (tx) => {
      await jobs.accept(tx, m, "stop", "stopped");
      await jobs.accept(tx, m, "start", "running");
    });
    await sql`update jobs set claim = null, lease_until = null where service_id = ${serviceId} and status = 'running'`;
    witnessed.length = 0;
    assert.equal(await jobs.tick(), 2);
    assert.deepEqual(witnessed, ["stop running", "start stopped"]);
    const [after] = await sql<MachineRow[]>`select * from machines where service_id = ${serviceId}`;
    assert.equal(after.state, "running");
    const statuses = await sql<{ action: string; status: string }[]>`select action, status from jobs
      where service_id = ${serviceId} and action in ('stop', 'start') order by started_at`;
    assert.deepEqual(
      statuses.map((j) => `${j.action} ${j.status}`),
      ["stop succeeded", "start succeeded"],
    );
  });

  it("starts a ProvisionBatch's builds together: ten cost PostgreSQL the round trips and statements of one", async () => {
    const batcher = createHandlers(sql, { jobs, drivers: { quick }, defaultProvider: "quick" });
    const ids: string[] = [];
    const trips = async (n: number) => {
      const requests = Array.from({ length: n }, (_, i) => {
        const serviceId = randomUUID();
        ids.push(serviceId);
        return create(ProvisionRequestSchema, {
          serviceId,
          customerId,
          kind: MachineKind.VPS,
          hostname: `many-${i}`,
        });
      });
      const counter = countWireRoundTrips();
      try {
        const { results } = await batcher.provisionBatch!(
          create(ProvisionBatchRequestSchema, { requests }),
          ctx,
        );
        assert.deepEqual(
          (results ?? []).map((r) => r.error),
          requests.map(() => ""),
        );
        return `${counter.count} round trips, ${counter.statements} statements`;
      } finally {
        counter.stop();
      }
    };
    // Until both ran on connections that had prepared their statements (a first use describes).
    let [one, ten] = [await trips(1), await trips(10)];
    for (let attempt = 1; ten !== one && attempt < 6; attempt++)
      [one, ten] = [await trips(1), await trips(10)];
    // One by one, each build's lease went back in a statement of its own, over the pool's
    // connections; and each build's job was inserted by a statement of its own.
    assert.equal(ten, one, `one build: ${one}; ten builds: ${ten}`);
    const builds = await sql<{ claim: string | null; status: string }[]>`select claim, status from jobs
      where service_id = any(${ids}::uuid[]) and action = 'build'`;
    assert.deepEqual(
      [...builds],
      ids.map(() => ({ claim: null, status: "running" })),
      "every build left to the loop, leased to no one",
    );
    await drain();
  });

  it("asks a driver about a job still running again as soon as the driver says, a second later when it says nothing", async () => {
    const serviceId = await builtThenOn("patient", "patient");
    const [m] = await sql<MachineRow[]>`select * from machines where service_id = ${serviceId}`;
    const job = await sql.begin((tx) => jobs.accept(tx, m, "stop", "stopped"));
    await jobs.launch(job, m);
    /** ms from now until the job is due again, after one pass of the loop. */
    const dueIn = async () => {
      await sql`update jobs set due_at = clock_timestamp() where id = ${job.id}`;
      assert.equal(await jobs.tick(), 1);
      const [{ ms }] = await sql<
        { ms: number }[]
      >`select (extract(epoch from due_at - clock_timestamp()) * 1000)::float8 as ms
        from jobs where id = ${job.id}`;
      return ms;
    };
    try {
      const soon = await dueIn();
      assert.ok(soon > 0 && soon <= 150, `due in ${soon} ms`);
      await sql`update machines set provider = 'quiet' where service_id = ${serviceId}`;
      const later = await dueIn();
      assert.ok(later > 150 && later <= 1000, `due in ${later} ms`);
    } finally {
      await sql`update jobs set status = 'failed', claim = null where id = ${job.id}`;
    }
  });

  it("keeps a driver's progress in the job, hands it the password in memory only, and records what a rebuild reports", async () => {
    const serviceId = randomUUID();
    await compute.provision!(
      create(ProvisionRequestSchema, { serviceId, customerId, kind: MachineKind.VPS, hostname: "kept" }),
      ctx,
    );
    await drain();
    await sql`update machines set provider = 'keeper', driver_state = '{"member": "m1"}' where service_id = ${serviceId}`;
    await compute.createSnapshot!(create(CreateSnapshotRequestSchema, { caller, serviceId }), ctx);
    await drain();
    await compute.reinstall!(
      create(ReinstallRequestSchema, {
        caller,
        serviceId,
        kind: MachineKind.VPS,
        imageId: "debian-12",
        password: "correct horse battery",
      }),
      ctx,
    );
    assert.equal(secretsSeen.at(-1), "correct horse battery");
    const [kept] = await sql<
      { driver_state: unknown; row: string }[]
    >`select driver_state, row_to_json(jobs)::text as row
      from jobs where service_id = ${serviceId} and action = 'reinstall'`;
    assert.deepEqual(kept.driver_state, { op: "op-reinstall" });
    assert.doesNotMatch(kept.row, /correct horse/, "the password is not in the job row");
    await drain();
    const [m] = await sql<MachineRow[]>`select * from machines where service_id = ${serviceId}`;
    assert.deepEqual(m.driver_state, { member: "m1", endpoint: "east" }, "merged, not replaced");
    assert.equal(m.ssh_port, 22123);
    const { machines = [] } = await compute.describeMachines!(
      create(DescribeMachinesRequestSchema, { caller, serviceIds: [serviceId] }),
      ctx,
    );
    assert.equal(machines[0].instance?.sshPort, 22123, "shown as instance.ssh_port");
    const copies = await sql<{ status: string }[]>`select status from copies where service_id = ${serviceId}`;
    assert.deepEqual(
      copies.map((c) => c.status),
      ["deleted"],
      "the snapshots the rebuild removed leave the list",
    );
  });

  it("records a copy's measured size; a failed backup leaves the list, a failed restore leaves it available", async () => {
    const serviceId = await builtThenOn("copier", "copied");
    const failing = (fail: boolean) =>
      sql`update machines set driver_state = ${JSON.stringify({ fail })}::text::jsonb where service_id = ${serviceId}`;
    const list = async () => {
      const { backups = [] } = await compute.listBackups!(
        create(ListBackupsRequestSchema, { caller, serviceId }),
        ctx,
      );
      return backups.map((b) => [b.name, CopyStatus[b.status ?? 0], b.sizeGb]);
    };
    const backup = (name: string) =>
      compute.createBackup!(create(CreateBackupRequestSchema, { caller, serviceId, name }), ctx);
    const jobOf = async (jobId = "") =>
      (await compute.getJob!(create(GetJobRequestSchema, { caller, jobId }), ctx)).job;

    const made = await backup("kept");
    assert.equal(made.backup?.sizeGb, 0, "not measured while it is being made");
    await drain();
    assert.deepEqual(await list(), [["kept", "AVAILABLE", 3]], "the size the provider measured");

    await failing(true);
    const lost = await backup("lost");
    await drain();
    assert.equal((await jobOf(lost.jobId))?.status, JobStatus.FAILED);
    assert.deepEqual(await list(), [["kept", "AVAILABLE", 3]], "the failed backup is not left creating");

    const kept = made.backup?.id ?? "";
    const restore = () =>
      compute.restoreBackup!(create(RestoreBackupRequestSchema, { caller, serviceId, backupId: kept }), ctx);
    const failed = await restore();
    await drain();
    assert.equal((await jobOf(failed.jobId))?.status, JobStatus.FAILED);
    assert.deepEqual(await list(), [["kept", "AVAILABLE", 3]], "available to restore again, not 409");
    const [m] = await sql<MachineRow[]>`select * from machines where service_id = ${serviceId}`;
    assert.equal(m.state, "error", "not left creating: the reconcile pass records the real state");

    await failing(false);
    const again = await restore();
    await drain();
    assert.equal((await jobOf(again.jobId))?.status, JobStatus.SUCCEEDED);
  });

  it("a machine lost at its provider answers 409 to power, keeps its instance, and is rebuilt by a reinstall", async () => {
    const serviceId = await builtThenOn("vanisher", "gone");
    const reboot = async () =>
      compute.runPowerAction!(
        create(RunPowerActionRequestSchema, { caller, serviceId, action: PowerAction.REBOOT }),
        ctx,
      );
    const conflict = (err: unknown) => {
      const e = resolveError(err);
      return e.status === 409 && e.code === "CONFLICT" && /reinstall/.test(e.message);
    };
    const instance = async () =>
      (
        await compute.describeMachines!(
          create(DescribeMachinesRequestSchema, { caller, serviceIds: [serviceId] }),
          ctx,
        )
      ).machines?.[0]?.instance;
    await assert.rejects(reboot(), conflict, "the provider's finding, not 424");
    assert.equal((await instance())?.state, InstanceState.ERROR, "still shown, as error, not 404");
    assert.ok((await instance())?.lostAt, "lost, for staff");
    await assert.rejects(reboot(), conflict, "refused before the provider is asked again");
    assert.deepEqual(vanisherStarts, ["reboot"]);
    await compute.reinstall!(
      create(ReinstallRequestSchema, { caller, serviceId, kind: MachineKind.VPS, imageId: "debian-12" }),
      ctx,
    );
    await drain();
    assert.equal((await instance())?.state, InstanceState.RUNNING);
    assert.equal((await instance())?.lostAt, undefined, "rebuilt: no longer lost");
  });

  it("gives concurrent builds different SSH proxy ports, each reserved in its job, and says when none is left", async () => {
    const ids = Array.from({ length: 12 }, () => randomUUID());
    for (const id of ids) {
      await sql`insert into jobs (id, service_id, customer_id, action) values (${id}, ${randomUUID()}, ${customerId}, 'build')`;
    }
    const ports = await Promise.all(ids.map((id) => freeSshPort(sql, 40_000, 40_011, id)));
    assert.equal(new Set(ports).size, 12, `distinct: ${ports.join(", ")}`);
    const reserved = await sql<{ port: number }[]>`select (driver_state->>'ssh_port')::int as port
      from jobs where id = any(${ids}::uuid[])`;
    assert.deepEqual(
      reserved.map((r) => r.port).sort(),
      [...ports].sort(),
      "each job holds its port from the moment it is chosen",
    );
    await assert.rejects(
      freeSshPort(sql, 40_000, 40_011, randomUUID()),
      /Every SSH proxy port in 40000-40011 is taken/,
    );
    await sql`update jobs set status = 'succeeded' where id = any(${ids}::uuid[])`;
  });
});
