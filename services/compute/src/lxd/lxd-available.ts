import { existsSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { createLxdClient } from "./client.ts";

export const LXD_SOCKET = process.env.LXD_SOCKET ?? "/var/lib/lxd/unix.socket";

/**
 * Why tests that need a real LXD daemon and these images cannot run here, or undefined when they
 * can. Tests skip with this reason (printed), never pass without running.
 */
export async function lxdUnavailable(images: string[]): Promise<string | undefined> {
  const building = await imagesBuilt();
  if (building) return building;
  if (!existsSync(LXD_SOCKET)) return `no LXD daemon socket at ${LXD_SOCKET} (run npm run lxd:setup as root)`;
  const c = createLxdClient({ name: "probe", socketPath: LXD_SOCKET });
  try {
    await c.get("/1.0");
  } catch (err) {
    return `the LXD daemon does not answer at ${LXD_SOCKET}: ${(err as Error).message}`;
  }
  for (const alias of images) {
    try {
      await c.get(`/1.0/images/aliases/${alias}`);
    } catch {
      return `LXD image ${alias} is not imported (run npm run images as root)`;
    }
  }
  return undefined;
}

/**
 * `.ci/run` builds the images in the background while its checks run and names a status file in
 * HB_LXD_IMAGES_STATUS that the build writes its exit code to when it ends. Waits for it (the
 * build takes about 75 s on a fresh machine); answers why the images are missing if it failed.
 */
async function imagesBuilt(): Promise<string | undefined> {
  const status = process.env.HB_LXD_IMAGES_STATUS;
  if (!status) return undefined;
  const deadline = Date.now() + 5 * 60_000;
  while (!existsSync(status)) {
    if (Date.now() > deadline) return `the LXD images were still building after 5 minutes (${status}.log)`;
    // Polling a file: the build is a separate process with no other signal to wait on.
    await sleep(500);
  }
  const code = readFileSync(status, "utf8").trim();
  return code === "0" ? undefined : `building the LXD images failed with exit code ${code} (${status}.log)`;
}
