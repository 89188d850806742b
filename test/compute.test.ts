import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { ServiceAction } from "@hb/contracts/hb/billing/v1/services_pb";
import { EventSchema } from "@hb/contracts/hb/events/v1/events_pb";
import { newId, streams } from "@hb/platform";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import {
  addCredit,
  api,
  auth,
  billing,
  eventually,
  newAccount,
  newMachine,
  newMember,
  newProduct,
} from "./helpers.ts";
import { heldBuild } from "./support/held-build.ts";
import { serviceSql } from "./support/service-db.ts";
import { ed25519Line, keyBlob, keyLine } from "./support/ssh-key-fixture.ts";

const db = serviceSql("compute");

/**
 * Waits until compute has applied billing's event for the service's new status. Not by retrying a
 * power action until it is refused: each one accepted meanwhile counts toward the power cool-down
 * (10 a minute), so when the event took over a second the eleventh answered 429, never 403.
 */
const computeHasStatus = (serviceId: string, status: string) =>
  eventually(async () => {
    const [m] = await db<{ service_status: string }[]>`
      select service_status from compute.machines where service_id = ${serviceId}`;
    return m?.service_status === status;
  }, 20_000);
after(() => db.end({ timeout: 5 }));

const VPS_FIELDS = [
  "id",
  "name",
  "hostname",
  "status",
  "kind",
  "provider",
  "product",
  "billing",
  "cancellation",
  "location",
  "primary_ip",
  "ip_addresses",
  "instance",
  "created_at",
];

describe("VPS records", () => {
  it("lists with default limit 50 and pagination beside data, in the spec's record shape", async () => {
    const acct = await newAccount();
    const running = await newMachine(acct);
    const failed = await newMachine(acct, { state: "error" });
    const r = await api("GET", "/api/v1/vps", { key: acct.key });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.pagination, { page: 1, limit: 50, total: 2, pages: 1 });
    const byId = new Map(r.body.data.map((v: { id: string }) => [v.id, v]));
    const v = byId.get(running) as Record<string, unknown>;
    assert.deepEqual(Object.keys(v).sort(), [...VPS_FIELDS].sort());
    assert.equal(v.kind, "vps");
    assert.equal(v.status, "active");
    assert.match((v.billing as { amount: string }).amount, /^\d+\.\d{4}$/);
    assert.deepEqual(Object.keys(v.instance as object).sort(), [
      "disk_gb",
      "memory_mb",
      "os",
      "rescue_mode",
      "state",
      "vcpus",
    ]);
    assert.deepEqual(Object.keys((v.ip_addresses as object[])[0]).sort(), [
      "address",
      "prefix_length",
      "purpose",
      "version",
    ]);
    assert.equal("capabilities" in v, false, "capabilities only on the detail");
    assert.equal("instance" in (byId.get(failed) as object), false, "no instance after a failed build");
    const detail = await api("GET", `/api/v1/vps/${running}`, { key: acct.key });
    assert.equal(typeof detail.body.data.capabilities.power, "boolean");
    const paged = await api("GET", "/api/v1/vps?limit=1&page=2", { key: acct.key });
    assert.equal(paged.body.data.length, 1);
    assert.deepEqual(paged.body.pagination, { page: 2, limit: 1, total: 2, pages: 2 });
    // A page past the end is empty and still counts the whole list.
    const past = await api("GET", "/api/v1/vps?limit=1&page=3", { key: acct.key });
    assert.deepEqual(past.body.data, []);
    assert.deepEqual(past.body.pagination, { page: 3, limit: 1, total: 2, pages: 2 });
    const none = await api("GET", "/api/v1/vps", { key: (await newAccount()).key });
    assert.deepEqual(none.body.data, []);
    assert.equal(none.body.pagination.total, 0);
  });

  it("hides another customer's VPS behind 404 and refuses a malformed id with 400", async () => {
    const owner = await newAccount();
    const other = await newAccount();
    const id = await newMachine(owner);
    for (const path of [`/api/v1/vps/${id}`, `/api/v1/vps/${id}/ips`]) {
      assert.equal((await api("GET", path, { key: other.key })).status, 404, path);
    }
    assert.equal((await api("POST", `/api/v1/vps/${id}/reboot`, { key: other.key })).status, 404);
    assert.equal((await api("GET", "/api/v1/vps/42", { key: owner.key })).status, 400);
  });

  it("shows a VPS with no machine yet with every control off and no instance", async () => {
    const acct = await newAccount();
    const product = await newProduct("vps");
    const { service } = await billing.adminCreateService({
      customerId: acct.customerId,
      productId: product.id,
      kind: ProductKind.VPS,
      // Awaiting payment, so the provisioner never builds it while the test looks (a "pending"
      // service is picked up within 100 ms); the VPS record reads "pending" for both.
      status: ServiceStatus.PENDING_PAYMENT,
    });
    const r = await api("GET", `/api/v1/vps/${service!.id}`, { key: acct.key });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.data.status, "pending");
    assert.equal("instance" in r.body.data, false);
    assert.deepEqual(r.body.data.capabilities, {
      power: false,
      reinstall: false,
      password: false,
      snapshots: false,
      backups: false,
      rescue: false,
    });
  });
});

describe("power and machine control", () => {
  it("accepts a power action with a job id and finishes it", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    const r = await api("POST", `/api/v1/vps/${id}/stop`, { key: acct.key });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.data.completed, false);
    assert.equal(r.body.data.pending, true);
    assert.ok(r.body.data.job_id);
    const job = await eventually(async () => {
      const j = await api("GET", `/api/v1/jobs/${r.body.data.job_id}`, { key: acct.key });
      return j.body.data.status === "succeeded" ? j.body.data : undefined;
    });
    assert.equal(job.action, "stop");
    assert.equal(job.resource.id, id);
    assert.ok(job.finished_at);
    const v = await api("GET", `/api/v1/vps/${id}`, { key: acct.key });
    assert.equal(v.body.data.instance.state, "stopped");
    const byName = await api("POST", `/api/v1/vps/${id}/power/start`, { key: acct.key });
    assert.equal(byName.status, 200, byName.text);
    await eventually(
      async () =>
        (await api("GET", `/api/v1/vps/${id}`, { key: acct.key })).body.data.instance.state === "running",
    );
    const explode = await api("POST", `/api/v1/vps/${id}/power/explode`, { key: acct.key });
    assert.equal(explode.status, 400);
    assert.equal(explode.body.details[0].field, "action");
  });

  it("answers 404 to power, reinstall and password on a VPS whose build failed, while the service reads fine", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct, { state: "error" });
    assert.equal((await api("GET", `/api/v1/services/${id}`, { key: acct.key })).status, 200);
    for (const [path, body] of [
      [`/api/v1/vps/${id}/start`, undefined],
      [`/api/v1/vps/${id}/reinstall`, { image_id: "debian-12", password: "correct horse" }],
      [`/api/v1/vps/${id}/password`, { password: "correct horse" }],
    ] as const) {
      const r = await api("POST", path, { key: acct.key, body });
      assert.equal(r.status, 404, `${path}: ${r.text}`);
      assert.equal(r.body.code, "NOT_FOUND");
    }
  });

  it("answers 409 while the machine is still being built, without consuming a cool-down", async () => {
    const acct = await newAccount();
    const { id, release } = await heldBuild(db, acct);
    for (let i = 0; i < 12; i++) {
      const r = await api("POST", `/api/v1/vps/${id}/reboot`, { key: acct.key });
      assert.equal(r.status, 409, `reboot ${i + 1}: ${r.text}`);
      assert.equal(r.body.code, "CONFLICT");
    }
    await release();
    await eventually(
      async () =>
        (await api("GET", `/api/v1/vps/${id}`, { key: acct.key })).body.data.instance?.state === "running",
    );
    // Had the 12 refused calls consumed the window (10 a minute), some of these ten would be 429.
    for (let i = 0; i < 10; i++) {
      const r = await api("POST", `/api/v1/services/${id}/power/restart`, { key: acct.key });
      assert.equal(r.status, 200, `restart ${i + 1} after 12 refused calls: ${r.text}`);
    }
  });

  it("shows a VPS being built with instance.state creating in the list, the detail and the service", async () => {
    const acct = await newAccount();
    const { id, release } = await heldBuild(db, acct);
    const list = await api("GET", "/api/v1/vps", { key: acct.key });
    const listed = list.body.data.find((v: { id: string }) => v.id === id);
    assert.equal(listed?.instance?.state, "creating", JSON.stringify(listed));
    const detail = await api("GET", `/api/v1/vps/${id}`, { key: acct.key });
    assert.equal(detail.body.data.instance?.state, "creating", detail.text);
    const service = await api("GET", `/api/v1/services/${id}`, { key: acct.key });
    assert.equal(service.body.data.machine?.state, "creating", service.text);
    const start = await api("POST", `/api/v1/vps/${id}/start`, { key: acct.key });
    assert.equal(start.status, 409, start.text);
    assert.equal(start.body.code, "CONFLICT");
    await release();
    await eventually(
      async () =>
        (await api("GET", `/api/v1/vps/${id}`, { key: acct.key })).body.data.instance?.state === "running",
    );
  });

  it("refuses a control switched off for the plan before the provider is asked", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct, { disabledControls: "reinstall" });
    const r = await api("POST", `/api/v1/vps/${id}/reinstall`, {
      key: acct.key,
      body: { image_id: "debian-12", password: "correct horse" },
    });
    assert.equal(r.status, 403);
    assert.equal(r.body.code, "ACTION_NOT_ALLOWED");
    const detail = await api("GET", `/api/v1/vps/${id}`, { key: acct.key });
    assert.equal(detail.body.data.capabilities.reinstall, false);
  });

  it("limits power actions to 10 a minute per service; the 11th is 429 ACTION_RATE_LIMITED", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    const other = await newMachine(acct);
    for (let i = 0; i < 10; i++) {
      const r = await api("POST", `/api/v1/services/${id}/power/restart`, { key: acct.key });
      assert.equal(r.status, 200, r.text);
    }
    const r = await api("POST", `/api/v1/vps/${id}/reboot`, { key: acct.key });
    assert.equal(r.status, 429);
    assert.equal(r.body.code, "ACTION_RATE_LIMITED");
    assert.ok(r.body.retry_after_seconds >= 1 && r.body.retry_after_seconds <= 60);
    assert.ok(Number(r.headers.get("retry-after")) >= 1);
    assert.equal(
      (await api("POST", `/api/v1/vps/${other}/reboot`, { key: acct.key })).status,
      200,
      "another service has its own window",
    );
  });

  it("shares a cool-down window between two keys of one person", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    const second = (
      await auth.createKey({
        personId: acct.ownerId,
        label: "2",
        scopes: ["services"],
        ipAllowlist: "",
      })
    ).secretKey;
    for (let i = 0; i < 5; i++) await api("POST", `/api/v1/vps/${id}/reboot`, { key: acct.key });
    for (let i = 0; i < 5; i++)
      assert.equal((await api("POST", `/api/v1/vps/${id}/reboot`, { key: second })).status, 200);
    assert.equal((await api("POST", `/api/v1/vps/${id}/reboot`, { key: second })).status, 429);
  });

  it("reinstalls only from the offered images, once per 5 minutes; a refused call consumes nothing", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    const images = await api("GET", `/api/v1/vps/${id}/os-images`, { key: acct.key });
    assert.deepEqual(
      images.body.data.images.map((i: { id: string }) => i.id),
      ["ubuntu-24.04", "debian-12", "rocky-9"],
    );
    const wrong = await api("POST", `/api/v1/vps/${id}/reinstall`, {
      key: acct.key,
      body: { image_id: "windows-xp", password: "correct horse" },
    });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.details[0].field, "image_id");
    const short = await api("POST", `/api/v1/vps/${id}/reinstall`, {
      key: acct.key,
      body: { image_id: "debian-12", password: "short" },
    });
    assert.equal(short.status, 400);
    const ok = await api("POST", `/api/v1/vps/${id}/reinstall`, {
      key: acct.key,
      body: { image_id: "debian-12", password: "correct horse" },
    });
    assert.equal(ok.status, 200, ok.text);
    assert.ok(ok.body.data.job_id);
    const again = await api("POST", `/api/v1/vps/${id}/reinstall`, {
      key: acct.key,
      body: { image_id: "debian-12", password: "correct horse" },
    });
    assert.equal(again.status, 429);
    await eventually(
      async () =>
        (await api("GET", `/api/v1/vps/${id}`, { key: acct.key })).body.data.instance?.os === "debian-12",
    );
  });

  it("resets a password only on a running machine, with at least 8 characters", async () => {
    const acct = await newAccount();
    const stopped = await newMachine(acct, { state: "stopped" });
    const running = await newMachine(acct);
    for (const body of [{ password: "1234567" }, {}]) {
      const r = await api("POST", `/api/v1/vps/${running}/password`, { key: acct.key, body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.details[0].field, "password");
    }
    const conflict = await api("POST", `/api/v1/vps/${stopped}/password`, {
      key: acct.key,
      body: { password: "12345678" },
    });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.code, "CONFLICT");
    const ok = await api("POST", `/api/v1/vps/${running}/password`, {
      key: acct.key,
      body: { password: "12345678" },
    });
    assert.equal(ok.status, 200, ok.text);
    const job = await eventually(async () => {
      const j = await api("GET", `/api/v1/jobs/${ok.body.data.job_id}`, { key: acct.key });
      return j.body.data.status === "succeeded" ? j.body.data : undefined;
    });
    assert.equal(job.action, "password");
  });

  it("answers 403 ACTION_NOT_ALLOWED for an action the provider does not expose, and runs status", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    const r = await api("POST", `/api/v1/services/${id}/actions/mine-bitcoin`, {
      key: acct.key,
      body: { params: {} },
    });
    assert.equal(r.status, 403);
    assert.equal(r.body.code, "ACTION_NOT_ALLOWED");
    const status = await api("POST", `/api/v1/services/${id}/actions/status`, { key: acct.key, body: {} });
    assert.equal(status.status, 200);
    assert.equal(status.body.data.completed, true);
    assert.equal(status.body.data.state, "running");
    const actions = await api("GET", `/api/v1/services/${id}/actions`, { key: acct.key });
    assert.equal(actions.body.data.backend, "simulator");
  });

  it("refuses control of a suspended service with 403 FORBIDDEN", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    await billing.adminSetServiceState({ serviceId: id, action: ServiceAction.SUSPEND, reason: "abuse" });
    await computeHasStatus(id, "suspended");
    const r = await api("POST", `/api/v1/vps/${id}/start`, { key: acct.key });
    assert.deepEqual([r.status, r.body.code], [403, "FORBIDDEN"]);
  });

  it("a burst of status events leaves each service with its last one, and a malformed event stops none of them", async () => {
    const acct = await newAccount();
    const [endsSuspended, endsActive] = [await newMachine(acct), await newMachine(acct)];
    const ns = process.env.HB_NS!;
    const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
    try {
      const js = jetstream(nc);
      const publish = (type: string, serviceId: string) => {
        const event = create(EventSchema, {
          id: newId(),
          type,
          occurredAt: timestampNow(),
          payload: { case: "service", value: { serviceId, status: ServiceStatus.SUSPENDED, hostname: "h" } },
        });
        return js.publish(
          `${ns}.${type.replace(/^service/, "events.service")}`,
          toBinary(EventSchema, event),
          {
            msgID: event.id,
          },
        );
      };
      // Published back to back, so the consumer takes several in one batch, interleaved.
      const flips = ["service.suspended", "service.unsuspended"];
      for (let i = 0; i < 6; i++) {
        await publish(flips[i % 2], endsActive);
        await publish(flips[(i + 1) % 2], endsSuspended);
        if (i === 2) await publish("service.suspended", "not-a-uuid");
      }
      const last = (await publish("service.suspended", endsSuspended)).seq;
      const jsm = await jetstreamManager(nc);
      await eventually(
        async () =>
          (await jsm.consumers.info(streams(ns).events.name, "compute-service-events")).ack_floor
            .stream_seq >= last,
      );
    } finally {
      await nc.close();
    }
    assert.equal((await api("POST", `/api/v1/vps/${endsSuspended}/start`, { key: acct.key })).status, 403);
    assert.equal((await api("POST", `/api/v1/vps/${endsActive}/start`, { key: acct.key })).status, 200);
  });

  it("needs the services scope and a power permission in a shared account", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    const viewer = await newMember(acct.customerId, ["view_services"]);
    const r = await api("POST", `/api/v1/vps/${id}/start`, { key: viewer.key });
    assert.equal(r.status, 403);
    assert.equal(r.body.code, "SCOPE_REQUIRED");
    assert.equal(r.body.scope, "services");
    const powerer = await newMember(acct.customerId, ["view_services", "power_services"], ["services"]);
    assert.equal((await api("POST", `/api/v1/vps/${id}/start`, { key: powerer.key })).status, 200);
    assert.equal(
      (
        await api("POST", `/api/v1/vps/${id}/reinstall`, {
          key: powerer.key,
          body: { image_id: "debian-12", password: "correct horse" },
        })
      ).status,
      403,
      "reinstall needs Manage Services",
    );
  });
});

describe("dedicated servers", () => {
  it("answers 424 PROVIDER_ERROR when the controller fails, and counts failed attempts in the 5 a minute window", async () => {
    const acct = await newAccount();
    const broken = await newMachine(acct, { kind: "dedicated", controllerFails: true });
    const fine = await newMachine(acct, { kind: "dedicated" });
    for (let i = 0; i < 5; i++) {
      const r = await api("POST", `/api/v1/dedicated/${broken}/power`, {
        key: acct.key,
        body: { action: "restart" },
      });
      assert.equal(r.status, 424, r.text);
      assert.equal(r.body.code, "PROVIDER_ERROR");
    }
    const r = await api("POST", `/api/v1/dedicated/${fine}/power/on`, { key: acct.key });
    assert.equal(r.status, 429, "the window spans all the customer's servers");
    const bad = await api("POST", `/api/v1/dedicated/${fine}/power`, {
      key: acct.key,
      body: { action: "reboot" },
    });
    assert.equal(bad.status, 400);
  });

  it("lists and reads dedicated servers with their status", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct, { kind: "dedicated" });
    const list = await api("GET", "/api/v1/dedicated", { key: acct.key });
    assert.equal(list.body.pagination.limit, 50);
    assert.equal(list.body.data[0].id, id);
    const ps = await api("GET", `/api/v1/dedicated/${id}/power-status`, { key: acct.key });
    assert.equal(ps.body.data.power, "on");
    assert.equal(
      (await api("GET", `/api/v1/vps/${id}`, { key: acct.key })).status,
      404,
      "a dedicated server is not a VPS",
    );
  });

  it("answers every read of a dedicated server and its generic service routes with 200", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct, { kind: "dedicated" });
    // api() checks each answer against the operation's documented schema.
    for (const path of [
      `/dedicated/${id}`,
      `/dedicated/${id}/ips`,
      `/dedicated/${id}/power-status`,
      `/dedicated/${id}/stats`,
      `/dedicated/${id}/traffic`,
      `/dedicated/${id}/provision-status`,
      `/dedicated/${id}/os-images`,
      `/services/${id}/stats`,
      `/services/${id}/actions`,
    ]) {
      const r = await api("GET", `/api/v1${path}`, { key: acct.key });
      assert.equal(r.status, 200, `${path}: ${r.text}`);
    }
    const status = await api("POST", `/api/v1/services/${id}/actions/status`, { key: acct.key, body: {} });
    assert.equal(status.body.data.state, "running");
    const stats = await api("POST", `/api/v1/services/${id}/actions/stats`, { key: acct.key, body: {} });
    assert.equal(stats.body.data.state, "running");
  });
});

describe("SSH keys", () => {
  it("stores a key with its fingerprint, lists and removes it", async () => {
    const acct = await newAccount();
    const line = ed25519Line("laptop");
    const r = await api("POST", "/api/v1/ssh-keys", {
      key: acct.key,
      body: { name: "laptop", publicKey: line },
    });
    assert.equal(r.status, 201, r.text);
    assert.match(r.body.data.fingerprint, /^SHA256:/);
    const list = await api("GET", "/api/v1/ssh-keys", { key: acct.key });
    assert.equal(list.body.data.ssh_keys.length, 1);
    assert.equal(
      (await api("POST", "/api/v1/ssh-keys", { key: acct.key, body: { name: "dup", publicKey: line } }))
        .status,
      409,
    );
    assert.equal((await api("DELETE", `/api/v1/ssh-keys/${r.body.data.id}`, { key: acct.key })).status, 200);
    assert.equal((await api("DELETE", `/api/v1/ssh-keys/${r.body.data.id}`, { key: acct.key })).status, 404);
  });

  it("refuses a key whose data is not a valid key of its stated type with 400 on publicKey, storing nothing", async () => {
    const acct = await newAccount();
    const ed = keyBlob("ssh-ed25519");
    for (const publicKey of [
      `ssh-ed25519 ${ed.subarray(0, ed.length - 4).toString("base64")} truncated`,
      `ssh-ed25519 ${keyBlob("ssh-rsa").toString("base64")} rsa-labelled-ed25519`,
    ]) {
      const r = await api("POST", "/api/v1/ssh-keys", { key: acct.key, body: { name: "bad", publicKey } });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.code, "BAD_REQUEST");
      assert.equal(r.body.details[0].field, "publicKey");
      assert.match(r.body.details[0].message, /not a valid ssh-ed25519 public key/);
    }
    const rsa = await api("POST", "/api/v1/ssh-keys", {
      key: acct.key,
      body: { name: "rsa", publicKey: keyLine("ssh-rsa", "ci runner") },
    });
    assert.equal(rsa.status, 201, rsa.text);
    assert.match(rsa.body.data.public_key, / ci runner$/);
    const list = await api("GET", "/api/v1/ssh-keys", { key: acct.key });
    assert.deepEqual(
      list.body.data.ssh_keys.map((k: { name: string }) => k.name),
      ["rsa"],
    );
  });

  it("refuses a line that is not an OpenSSH public key, naming the field", async () => {
    const acct = await newAccount();
    for (const body of [
      { name: "x", publicKey: "not a key" },
      { name: "x" },
      { name: "", publicKey: ed25519Line() },
      { name: "x", publicKey: 12 },
    ]) {
      const r = await api("POST", "/api/v1/ssh-keys", { key: acct.key, body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.ok(["publicKey", "name"].includes(r.body.details[0].field));
    }
  });
});

describe("buying a VPS end to end", () => {
  it("goes from pending to active and answers power actions once built", async () => {
    const acct = await newAccount();
    await addCredit(acct, "50");
    const product = await newProduct("vps");
    const order = await api("POST", "/api/v1/orders", {
      key: acct.key,
      body: {
        productId: product.id,
        billingCycle: "monthly",
        hostname: "e2e",
        configOptions: { os_image_id: "debian-12" },
      },
    });
    assert.equal(order.status, 201, order.text);
    const id = order.body.data.services[0].id;
    const vps = await eventually(async () => {
      const v = await api("GET", `/api/v1/vps/${id}`, { key: acct.key });
      return v.body.data?.status === "active" && v.body.data.instance ? v.body.data : undefined;
    });
    assert.equal(vps.instance.os, "debian-12");
    assert.ok(vps.primary_ip);
    assert.equal((await api("POST", `/api/v1/vps/${id}/reboot`, { key: acct.key })).status, 200);
  });

  it("a failed build leaves the service provisioning_failed with no instance", async () => {
    const acct = await newAccount();
    await addCredit(acct, "50");
    const product = await newProduct("vps");
    const order = await api("POST", "/api/v1/orders", {
      key: acct.key,
      body: { productId: product.id, billingCycle: "monthly", hostname: "will-fail" },
    });
    const id = order.body.data.services[0].id;
    await eventually(
      async () =>
        (await api("GET", `/api/v1/services/${id}`, { key: acct.key })).body.data.status ===
        "provisioning_failed",
    );
    const v = await api("GET", `/api/v1/vps/${id}`, { key: acct.key });
    assert.equal("instance" in v.body.data, false);
    assert.equal((await api("POST", `/api/v1/vps/${id}/start`, { key: acct.key })).status, 404);
  });
});

describe("snapshots, backups and cancelling a VPS", () => {
  it("creates, lists, reverts and deletes snapshots as jobs", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    const created = await api("POST", `/api/v1/vps/${id}/snapshots`, {
      key: acct.key,
      body: { name: "before-upgrade" },
    });
    assert.equal(created.status, 200, created.text);
    assert.ok(created.body.data.job_id);
    const snap = await eventually(async () => {
      const l = await api("GET", `/api/v1/vps/${id}/snapshots`, { key: acct.key });
      return l.body.data.snapshots[0]?.status === "available" ? l.body.data.snapshots[0] : undefined;
    });
    assert.equal(snap.name, "before-upgrade");
    const revert = await api("POST", `/api/v1/vps/${id}/snapshots/${snap.id}/revert`, { key: acct.key });
    assert.equal(revert.status, 200);
    await eventually(
      async () =>
        (await api("GET", `/api/v1/vps/${id}`, { key: acct.key })).body.data.instance.state === "running",
    );
    assert.equal(
      (await api("DELETE", `/api/v1/vps/${id}/snapshots/${snap.id}`, { key: acct.key })).status,
      200,
    );
    assert.equal(
      (await api("DELETE", `/api/v1/vps/${id}/snapshots/${snap.id}`, { key: acct.key })).status,
      404,
    );
  });

  it("refuses the snapshot list like the snapshot writes when the plan has snapshots off", async () => {
    const acct = await newAccount();
    const off = await newMachine(acct, { disabledControls: "snapshots,backups" });
    const write = await api("POST", `/api/v1/vps/${off}/snapshots`, { key: acct.key, body: {} });
    const list = await api("GET", `/api/v1/vps/${off}/snapshots`, { key: acct.key });
    for (const r of [write, list]) {
      assert.equal(r.status, 403, r.text);
      assert.equal(r.body.code, "ACTION_NOT_ALLOWED");
    }
    const backups = await api("GET", `/api/v1/services/${off}/backups`, { key: acct.key });
    assert.equal(backups.status, 403, "backups switched off: their list too");
    assert.equal(backups.body.code, "ACTION_NOT_ALLOWED");
  });

  it("limits backup create and restore to 2 per 10 minutes per service", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    const first = await api("POST", `/api/v1/services/${id}/backups`, { key: acct.key, body: {} });
    assert.equal(first.status, 200, first.text);
    const backup = await eventually(async () => {
      const l = await api("GET", `/api/v1/services/${id}/backups`, { key: acct.key });
      return l.body.data.backups[0]?.status === "available" ? l.body.data.backups[0] : undefined;
    });
    assert.equal(
      (await api("POST", `/api/v1/services/${id}/backups/${backup.id}/restore`, { key: acct.key })).status,
      200,
    );
    const third = await api("POST", `/api/v1/services/${id}/backups`, { key: acct.key, body: {} });
    assert.equal(third.status, 429);
    assert.equal(third.body.code, "ACTION_RATE_LIMITED");
  });

  it("DELETE /vps/{id} needs destructive and terminates at once when immediate", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    const noScope = (
      await auth.createKey({
        personId: acct.ownerId,
        label: "s",
        scopes: ["services"],
        ipAllowlist: "",
      })
    ).secretKey;
    const refused = await api("DELETE", `/api/v1/vps/${id}`, { key: noScope, body: { immediate: true } });
    assert.equal(refused.body.code, "SCOPE_REQUIRED");
    const snapshots = async () =>
      (await api("GET", `/api/v1/vps/${id}/snapshots`, { key: acct.key })).body.data.snapshots;
    const backups = async () =>
      (await api("GET", `/api/v1/services/${id}/backups`, { key: acct.key })).body.data.backups;
    await api("POST", `/api/v1/vps/${id}/snapshots`, { key: acct.key, body: { name: "before" } });
    await api("POST", `/api/v1/services/${id}/backups`, { key: acct.key, body: {} });
    await eventually(async () => (await snapshots())[0]?.status === "available");
    await eventually(async () => (await backups())[0]?.status === "available");
    const r = await api("DELETE", `/api/v1/vps/${id}`, {
      key: acct.key,
      body: { immediate: true, reason: "done" },
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.data.status, "terminated");
    await computeHasStatus(id, "terminated");
    const start = await api("POST", `/api/v1/vps/${id}/start`, { key: acct.key });
    assert.deepEqual([start.status, start.body.code], [403, "FORBIDDEN"]);
    // Its copies ended with it: none still reads available.
    assert.deepEqual(await snapshots(), []);
    assert.deepEqual(await backups(), []);
  });

  it("DELETE /vps/{id} without immediate schedules the cancellation, shown as in the VPS record", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    const r = await api("DELETE", `/api/v1/vps/${id}`, { key: acct.key, body: { reason: "moving" } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.data.status, "active");
    const detail = await api("GET", `/api/v1/vps/${id}`, { key: acct.key });
    assert.equal(detail.body.data.cancellation.type, "end_of_term");
    assert.deepEqual(r.body.data.cancellation, detail.body.data.cancellation);
  });
});

describe("a machine being rebuilt", () => {
  it("answers 409 to power while a reinstall runs, saying it is being rebuilt rather than built", async () => {
    const acct = await newAccount();
    for (let attempt = 0; attempt < 5; attempt++) {
      const id = await newMachine(acct);
      const re = await api("POST", `/api/v1/vps/${id}/reinstall`, {
        key: acct.key,
        body: { image_id: "debian-12", password: "correct horse battery" },
      });
      assert.equal(re.status, 200, re.text);
      // Hold the simulated reinstall so the machine stays in its rebuild while we ask.
      const held = await db`update compute.jobs set due_at = now() + interval '1 hour'
        where service_id = ${id} and action = 'reinstall' and status = 'running'
          and (lease_until is null or lease_until < clock_timestamp()) returning id`;
      if (!held.length) continue;
      const power = await api("POST", `/api/v1/vps/${id}/reboot`, { key: acct.key });
      assert.equal(power.status, 409, power.text);
      assert.equal(power.body.code, "CONFLICT");
      assert.match(power.body.error, /being rebuilt/);
      await db`update compute.jobs set due_at = now() where service_id = ${id} and action = 'reinstall'`;
      return;
    }
    assert.fail("no reinstall could be held: the simulated reinstalls finish before the hold");
  });
});
