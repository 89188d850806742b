import { type LxdClient, LxdError, type LxdInstance } from "./client.ts";
import { instanceBusy, instanceRunning } from "./transient.ts";

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
 *
 * With `patienceMs`, the stop is waited for until it has ended and a stop or delete LXD refuses
 * because the instance is busy with another operation is asked again each second, until that long
 * has passed. CI, six test files at once: a create's delete of a container whose id range was
 * shared came while the force stop before it still ran (an operation's wait answers after 30 s,
 * ended or not), and the build failed "Instance is busy running a "stop" operation". Without it
 * (the build's own delete step) a busy refusal is the job's to wait out, across its ticks.
 */
export async function submitDelete(c: LxdClient, name: string, patienceMs = 0): Promise<string | undefined> {
  const url = `/1.0/instances/${name}`;
  const deadline = Date.now() + patienceMs;
  const patient = async <T>(ask: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await ask();
      } catch (err) {
        if (!(err instanceof LxdError && instanceBusy(err.message)) || Date.now() >= deadline) throw err;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  };
  const stop = async () => {
    const id = await patient(() => c.submit("PUT", `${url}/state`, { action: "stop", force: true }));
    if (!id) return;
    for (;;) {
      const op = await c.operation(id, 30);
      if ((op.status !== "Running" && op.status !== "Pending") || Date.now() >= deadline) return;
    }
  };
  const i = await instance(c, name);
  if (!i) return undefined;
  if (i.status !== "Stopped") await stop();
  try {
    return await patient(() => c.submit("DELETE", url));
  } catch (err) {
    if (!(err instanceof LxdError && instanceRunning(err.message))) throw err;
    await stop();
    return patient(() => c.submit("DELETE", url));
  }
}

/** How long a build's delete of a container it made waits out LXD's other operations on it. */
export const DELETE_PATIENCE_MS = 120_000;
