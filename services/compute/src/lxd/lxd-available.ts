import { existsSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { createLxdClient } from "./client.ts";

export const LXD_SOCKET = process.env.LXD_SOCKET ?? "/var/lib/lxd/unix.socket";

/**
 * Why tests that need a real LXD daemon and these images cannot run here, or undefined when they
 * can. Tests skip with this reason (printed), never pass without running.
 *
 * `.ci/run` builds the images in the background while the tests start and names a status file in
 * HB_LXD_IMAGES_STATUS that the build writes its exit code to when it ends. A test waits only for
 * the images it names: busybox is imported within seconds, Debian's image after about two minutes
 * on a fresh machine (139 s measured 2026-12-01), and the files that need only busybox waited for
 * both, each holding one of the run's four places (about 100 s each in a fresh machine's run).
 */
export async function lxdUnavailable(images: string[]): Promise<string | undefined> {
  if (!existsSync(LXD_SOCKET)) return `no LXD daemon socket at ${LXD_SOCKET} (run npm run lxd:setup as root)`;
  const c = createLxdClient({ name: "probe", socketPath: LXD_SOCKET });
  try {
    await c.get("/1.0");
  } catch (err) {
    return `the LXD daemon does not answer at ${LXD_SOCKET}: ${(err as Error).message}`;
  }
  const status = process.env.HB_LXD_IMAGES_STATUS;
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    const missing: string[] = [];
    for (const alias of images) {
      try {
        await c.get(`/1.0/images/aliases/${alias}`);
      } catch {
        missing.push(alias);
      }
    }
    if (missing.length === 0) return undefined;
    const building = status !== undefined && !existsSync(status);
    if (!building) {
      const code = status ? readFileSync(status, "utf8").trim() : "0";
      if (code !== "0") return `building the LXD images failed with exit code ${code} (${status}.log)`;
      return `LXD image ${missing[0]} is not imported (run npm run images as root)`;
    }
    if (Date.now() > deadline) return `the LXD images were still building after 5 minutes (${status}.log)`;
    // Polling: the build is a separate process with no other signal to wait on.
    await sleep(500);
  }
}
