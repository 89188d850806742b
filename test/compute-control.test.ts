import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { api, eventually, newAccount, newMachine } from "./helpers.ts";
import { serviceSql } from "./support/service-db.ts";

describe("VPS power routes", () => {
  it("accepts the five named routes and the six actions of power/{action}, each moving instance.state", async () => {
    const acct = await newAccount();
    const named = await newMachine(acct);
    const byPath = await newMachine(acct);
    const expect: [string, string, string][] = [
      [named, "stop", "stopped"],
      [named, "start", "running"],
      [named, "shutdown", "stopped"],
      [named, "reboot", "running"],
      [named, "restart", "running"],
    ];
    for (const action of ["poweroff", "start", "shutdown", "restart", "stop", "reboot"]) {
      expect.push([
        byPath,
        `power/${action}`,
        ["poweroff", "shutdown", "stop"].includes(action) ? "stopped" : "running",
      ]);
    }
    for (const [id, path, state] of expect) {
      const r = await api("POST", `/api/v1/vps/${id}/${path}`, { key: acct.key });
      assert.equal(r.status, 200, `${path}: ${r.text}`);
      assert.deepEqual(Object.keys(r.body.data).sort(), ["completed", "job_id", "pending"], path);
      const job = await eventually(async () => {
        const j = await api("GET", `/api/v1/jobs/${r.body.data.job_id}`, { key: acct.key });
        return j.body.data.status === "succeeded" ? j.body.data : undefined;
      });
      assert.equal(job.progress, 100);
      const v = await api("GET", `/api/v1/vps/${id}`, { key: acct.key });
      assert.equal(v.body.data.instance.state, state, path);
    }
    const stats = await api("GET", `/api/v1/vps/${named}/stats`, { key: acct.key });
    assert.deepEqual(Object.keys(stats.body.data).sort(), ["cpu", "disk", "memory", "network", "state"]);
  });

  it("reinstalls and resets the password through the generic service routes", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    const pw = await api("POST", `/api/v1/services/${id}/password`, {
      key: acct.key,
      body: { password: "short" },
    });
    assert.equal(pw.status, 400);
    assert.equal(pw.body.details[0].field, "password");
    const ok = await api("POST", `/api/v1/services/${id}/password`, {
      key: acct.key,
      body: { password: "correct horse" },
    });
    assert.equal(ok.status, 200, ok.text);
    const again = await api("POST", `/api/v1/vps/${id}/password`, {
      key: acct.key,
      body: { password: "correct horse" },
    });
    assert.equal(again.status, 429, "one password window per service across both routes");
    const re = await api("POST", `/api/v1/services/${id}/reinstall`, { key: acct.key, body: {} });
    assert.equal(re.status, 200, re.text);
    assert.equal(re.body.data.pending, true);
    assert.equal(
      (await api("POST", `/api/v1/services/${id}/reinstall`, { key: acct.key, body: {} })).status,
      429,
    );
  });
});

describe("game servers", () => {
  it("reads the game detail and runs start, stop, restart and kill on game services only", async () => {
    const acct = await newAccount();
    const game = await newMachine(acct, { kind: "game" });
    const vps = await newMachine(acct);
    const detail = await api("GET", `/api/v1/services/${game}/game`, { key: acct.key });
    assert.equal(detail.status, 200, detail.text);
    assert.equal(detail.body.data.state, "running");
    assert.equal((await api("GET", `/api/v1/services/${vps}/game`, { key: acct.key })).status, 400);
    const kill = await api("POST", `/api/v1/services/${game}/game/power/kill`, { key: acct.key });
    assert.equal(kill.status, 200, kill.text);
    assert.equal(kill.body.data.pending, true);
    assert.ok(kill.body.data.job_id);
    await eventually(
      async () =>
        (await api("GET", `/api/v1/services/${game}/game`, { key: acct.key })).body.data.state === "stopped",
    );
    const bad = await api("POST", `/api/v1/services/${game}/game/power/explode`, { key: acct.key });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.details[0].field, "action");
    const onVps = await api("POST", `/api/v1/services/${vps}/game/power/start`, { key: acct.key });
    assert.equal(onVps.status, 404, "a VPS is not a game service");
  });
});

describe("dedicated reinstall and password", () => {
  it("reinstalls only onto an offered osImageId and names the field otherwise", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct, { kind: "dedicated" });
    const images = await api("GET", `/api/v1/dedicated/${id}/os-images`, { key: acct.key });
    assert.equal(images.status, 200);
    const wrong = await api("POST", `/api/v1/dedicated/${id}/reinstall`, {
      key: acct.key,
      body: { osImageId: "windows-xp" },
    });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.details[0].field, "osImageId");
    const missing = await api("POST", `/api/v1/dedicated/${id}/reinstall`, { key: acct.key, body: {} });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.details[0].field, "osImageId");
    const ok = await api("POST", `/api/v1/dedicated/${id}/reinstall`, {
      key: acct.key,
      body: { osImageId: images.body.data.images[0].id },
    });
    assert.equal(ok.status, 200, ok.text);
    assert.ok(ok.body.data.job_id);
    const ps = await api("GET", `/api/v1/dedicated/${id}/provision-status`, { key: acct.key });
    assert.equal(ps.body.data.job.action, "reinstall");
  });

  it("rebuilds a platform-provisioned server on a password reset and returns a generated password", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct, { kind: "dedicated" });
    const r = await api("POST", `/api/v1/dedicated/${id}/password`, { key: acct.key, body: {} });
    assert.equal(r.status, 200, r.text);
    assert.equal(typeof r.body.data.password, "string");
    assert.ok(r.body.data.password.length >= 8);
    assert.ok(r.body.data.job_id);
    const again = await api("POST", `/api/v1/dedicated/${id}/password`, { key: acct.key, body: {} });
    assert.equal(again.status, 429, "1 per 10 minutes");
  });
});

describe("jobs", () => {
  it("reports a failed job with its code and message, and hides another customer's job", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct, { failBuild: true });
    const r = await api("POST", `/api/v1/vps/${id}/reinstall`, {
      key: acct.key,
      body: { image_id: "debian-12", password: "correct horse" },
    });
    assert.equal(r.status, 200, r.text);
    const job = await eventually(async () => {
      const j = await api("GET", `/api/v1/jobs/${r.body.data.job_id}`, { key: acct.key });
      return j.body.data.status === "failed" ? j.body.data : undefined;
    });
    assert.equal(job.action, "reinstall");
    assert.equal(job.progress, 100);
    assert.ok(job.started_at && job.finished_at);
    assert.equal(typeof job.error.code, "string");
    assert.ok(job.error.message);
    // The instance is gone after the failed rebuild: control answers 404.
    assert.equal((await api("POST", `/api/v1/vps/${id}/start`, { key: acct.key })).status, 404);
    const other = await newAccount();
    const hidden = await api("GET", `/api/v1/jobs/${r.body.data.job_id}`, { key: other.key });
    assert.equal(hidden.status, 404);
    assert.equal(hidden.body.code, "NOT_FOUND");
    assert.equal((await api("GET", "/api/v1/jobs/nope", { key: acct.key })).status, 400);
  });

  it("keeps a finished job readable for 30 days", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    const a = await api("POST", `/api/v1/vps/${id}/reboot`, { key: acct.key });
    const b = await api("POST", `/api/v1/vps/${id}/reboot`, { key: acct.key });
    const sql = serviceSql("compute");
    try {
      await sql`update compute.jobs set status = 'succeeded', progress = 100,
        finished_at = now() - interval '29 days' where id = ${a.body.data.job_id}`;
      await sql`update compute.jobs set status = 'succeeded', progress = 100,
        finished_at = now() - interval '31 days' where id = ${b.body.data.job_id}`;
    } finally {
      await sql.end();
    }
    assert.equal((await api("GET", `/api/v1/jobs/${a.body.data.job_id}`, { key: acct.key })).status, 200);
    assert.equal((await api("GET", `/api/v1/jobs/${b.body.data.job_id}`, { key: acct.key })).status, 404);
  });

  it("appears in the OpenAPI document", async () => {
    const r = await api("GET", "/api/v1/openapi.json");
    assert.equal(r.status, 200);
    const paths = Object.keys(r.body.paths);
    assert.ok(
      paths.some((p) => /\/jobs\/\{[a-zA-Z]+\}$/.test(p)),
      paths.filter((p) => p.includes("job")).join(),
    );
  });
});
