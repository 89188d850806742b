import type { MachineRow } from "../machines.ts";
import { JobFailure, type Step } from "./backups.ts";
import type { LxdClient } from "./client.ts";
import { PASSWORD_SCRIPT, sshdPasswordConf } from "./ssh-password.ts";

/**
 * Sets root's password inside the running machine (`secret`: the job's password, never stored), and
 * the machine's SSH password choice.
 */
export function passwordStep(c: LxdClient, url: string, m: MachineRow, secret: string | undefined): Step {
  return {
    name: "password",
    async act() {
      if (!secret) throw new JobFailure("The password was not applied; set it again");
      // The password travels in the exec's environment, not its command line.
      return c.submit("POST", `${url}/exec`, {
        command: ["/bin/sh", "-c", PASSWORD_SCRIPT],
        environment: {
          HB_PASSWORD: secret,
          HB_SSHD_CONF: sshdPasswordConf(m.ssh_password_login),
          PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        },
        "wait-for-websocket": false,
        interactive: false,
        "record-output": false,
      });
    },
  };
}
