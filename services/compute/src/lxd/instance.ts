import { type LxdClient, LxdError, type LxdInstance } from "./client.ts";
import { instanceRunning } from "./transient.ts";

export const LXD_STATES: Record<string, string> = {
  Running: "running",
  Stopped: "stopped",
  Frozen: "paused",
  Error: "error",
};

/** The instance's LXD name; instance names must be host names, so the service id, prefixed. */
export const instanceName = (serviceId: string) => `hb-${serviceId}`;

/** The instance by its name; undefined when LXD has none of that name. */
export async function instance(c: LxdClient, name: string): Promise<LxdInstance | undefined> {
  try {
    return await c.get<LxdInstance>(`/1.0/instances/${name}`);
  } catch (err) {
    if (err instanceof LxdError && err.status === 404) return undefined;
    throw err;
  }
}

export async function pushFile(c: LxdClient, name: string, file: string, content: string, mode: string) {
  await c.send(
    "POST",
    `/1.0/instances/${name}/files?path=${encodeURIComponent(file)}`,
    Buffer.from(content),
    {
      "content-type": "application/octet-stream",
      "x-lxd-uid": "0",
      "x-lxd-gid": "0",
      "x-lxd-mode": mode,
      "x-lxd-type": "file",
      "x-lxd-write": "overwrite",
    },
  );
}

export async function makeDir(c: LxdClient, name: string, dir: string, mode = "0700") {
  try {
    await c.send("POST", `/1.0/instances/${name}/files?path=${encodeURIComponent(dir)}`, Buffer.alloc(0), {
      "x-lxd-uid": "0",
      "x-lxd-gid": "0",
      "x-lxd-mode": mode,
      "x-lxd-type": "directory",
    });
  } catch (err) {
    if (!(err instanceof LxdError && /exist/i.test(err.message))) throw err;
  }
}

/** Waits for an LXD operation, when a call started one. */
export async function waitOp(c: LxdClient, id: string) {
  if (id) await c.operation(id, 30);
}

/**
 * Asks LXD to delete the instance, stopped first (LXD deletes only a stopped one): the operation's
 * id, or undefined when there is no such instance. A delete refused because the instance came up
 * meanwhile (a start LXD reported failed, bench:lxd) is asked again once, after another stop.
 */
export async function submitDelete(c: LxdClient, name: string): Promise<string | undefined> {
  const url = `/1.0/instances/${name}`;
  const stop = async () => waitOp(c, await c.submit("PUT", `${url}/state`, { action: "stop", force: true }));
  const i = await instance(c, name);
  if (!i) return undefined;
  if (i.status !== "Stopped") await stop();
  try {
    return await c.submit("DELETE", url);
  } catch (err) {
    if (!(err instanceof LxdError && instanceRunning(err.message))) throw err;
    await stop();
    return c.submit("DELETE", url);
  }
}
