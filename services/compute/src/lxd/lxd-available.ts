import { existsSync } from "node:fs";
import { createLxdClient } from "./client.ts";

export const LXD_SOCKET = process.env.LXD_SOCKET ?? "/var/lib/lxd/unix.socket";

/**
 * Why tests that need a real LXD daemon and these images cannot run here, or undefined when they
 * can. Tests skip with this reason (printed), never pass without running.
 */
export async function lxdUnavailable(images: string[]): Promise<string | undefined> {
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
