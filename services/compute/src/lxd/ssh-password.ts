/**
 * Whether root may log in over SSH with a password: a per-machine choice (machines.ssh_password_login,
 * off unless the customer turns it on with a password reset). It lives in a drop-in of its own, which
 * Debian's sshd_config includes before its own settings (sshd keeps the first value it reads).
 */
export const SSHD_PASSWORD_CONF = "/etc/ssh/sshd_config.d/hb-password.conf";

export function sshdPasswordConf(on: boolean): string {
  // Off still lets root in with a key: the keys the build installs are how a VPS is reached.
  return [
    "# Written by the hosting platform: the VPS's SSH password login choice (its password reset sets it).",
    `PasswordAuthentication ${on ? "yes" : "no"}`,
    `PermitRootLogin ${on ? "yes" : "prohibit-password"}`,
    "",
  ].join("\n");
}

/**
 * The password step's script: sets root's password ($HB_PASSWORD), writes the choice
 * ($HB_SSHD_CONF) and has a running sshd read it again (SIGHUP; where none runs, the next boot's
 * reads the file). The values travel in the exec's environment, never its command line.
 */
export const PASSWORD_SCRIPT = [
  "set -e",
  'printf "root:%s\\n" "$HB_PASSWORD" | chpasswd',
  `mkdir -p ${SSHD_PASSWORD_CONF.slice(0, SSHD_PASSWORD_CONF.lastIndexOf("/"))}`,
  `printf "%s" "$HB_SSHD_CONF" > ${SSHD_PASSWORD_CONF}`,
  'if [ -s /run/sshd.pid ]; then kill -HUP "$(cat /run/sshd.pid)"; fi',
].join("\n");
