/**
 * SSH password login inside a real Debian container (issue 30 §5): off after a build, turned on and
 * off again by password jobs, each time what a running sshd does (a password login through the
 * machine's loopback SSH proxy), not only what its file says. Needs LXD and the debian-12 image
 * (npm run lxd:setup, npm run images); skipped, saying why, without them.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import ssh2 from "ssh2";
import { eventually } from "../../../../test/support/eventually.ts";
import type { MachineRow } from "../machines.ts";
import { createLxdDriver } from "./driver.ts";
import { lxdUnavailable } from "./lxd-available.ts";
import { built, driverConfig, inside, job, real, settle } from "./lxd-harness.ts";

const unavailable = await lxdUnavailable(["debian-12"]);
if (unavailable) process.stderr.write(`SSH password login tests skipped: ${unavailable}\n`);

const PASSWORD = "ssh pass 4242";

/** Whether root's password logs in over SSH on the machine's proxy port. */
function passwordLogin(m: MachineRow): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const c = new ssh2.Client();
    c.on("ready", () => {
      c.end();
      resolve(true);
    });
    c.on("error", (err: Error & { level?: string }) => {
      c.end();
      // Refused authentication is the answer "no"; anything else (sshd not up yet) is not an answer.
      if (err.level === "client-authentication") resolve(false);
      else reject(err);
    });
    c.connect({
      host: "127.0.0.1",
      port: m.ssh_port ?? 0,
      username: "root",
      password: PASSWORD,
      tryKeyboard: false,
      readyTimeout: 10_000,
    });
  });
}

/** sshd's effective settings for password login, as `sshd -T` reports them. */
const effective = (m: MachineRow) =>
  inside(m, "sh", "-c", "sshd -T 2>/dev/null | grep -Ei '^(passwordauthentication|permitrootlogin) '")
    .split("\n")
    .sort()
    .join(", ");

describe("SSH password login on a real machine", { skip: unavailable }, () => {
  const d = createLxdDriver({ ...driverConfig([real]), images: { "debian-12": "debian-12" } });

  it("is off after a build, and each password job sets it as the machine's choice says", async () => {
    const m = await built(d, { os: "debian-12", os_images: ["debian-12"] });
    // sshd answers once it has generated the machine's host keys at first boot.
    assert.equal(
      await eventually(async () => effective(m), 60_000, 500),
      "passwordauthentication no, permitrootlogin without-password",
    );

    const password = async (on: boolean) => {
      m.ssh_password_login = on;
      assert.deepEqual(await settle(d, job(m, "password", { secret: PASSWORD }), m), { ok: true });
    };
    await password(false);
    // The first login waits for sshd to listen (`sshd -T` reads the files without it).
    const first = await eventually(async () => ({ loggedIn: await passwordLogin(m) }), 30_000, 500);
    assert.equal(first.loggedIn, false, "a password does not log in while the choice is off");

    await password(true);
    assert.equal(effective(m), "passwordauthentication yes, permitrootlogin yes");
    assert.equal(await passwordLogin(m), true, "the running sshd took the choice without a restart");

    await password(false);
    assert.equal(effective(m), "passwordauthentication no, permitrootlogin without-password");
    assert.equal(await passwordLogin(m), false);
  });
});
