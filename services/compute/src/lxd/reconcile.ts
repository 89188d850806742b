import type { Logger, Sql } from "@hb/platform";
import type { LxdClient, LxdInstance } from "./client.ts";
import { LXD_STATES } from "./driver.ts";

/**
 * The reconcile pass: compares each built lxd machine's recorded state with its container's and
 * records what changed outside the platform (an operator stopped it, it was deleted: `error`).
 * Machines with a running job are left to the job. The VPS pages read these rows, never LXD.
 */
export function createReconciler(sql: Sql, clients: LxdClient[], log: Logger) {
  async function pass(): Promise<number> {
    const seen = new Map<string, Map<string, string>>();
    await Promise.all(
      clients.map(async (c) => {
        try {
          const list = await c.get<LxdInstance[]>("/1.0/instances?recursion=1");
          seen.set(c.endpoint.name, new Map(list.map((i) => [i.name, i.status])));
        } catch (err) {
          // An endpoint that does not answer tells nothing about its machines this time.
          log.warn("LXD endpoint did not answer the reconcile pass", { endpoint: c.endpoint.name, err });
        }
      }),
    );
    const machines = await sql<
      { service_id: string; state: string; endpoint: string | null; lost: boolean }[]
    >`
      select service_id, state, driver_state->>'endpoint' as endpoint, lost_at is not null as lost from machines m
      where provider = 'lxd' and has_instance and state <> 'creating'
        and not exists (select 1 from jobs j where j.service_id = m.service_id and j.status = 'running')`;
    const changed: { id: string; state: string; missing: boolean }[] = [];
    for (const m of machines) {
      const instances = seen.get(m.endpoint ?? clients[0]?.endpoint.name ?? "");
      if (!instances) continue;
      const status = instances.get(`hb-${m.service_id}`);
      const state = status ? (LXD_STATES[status] ?? "error") : "error";
      if (state !== m.state || !status !== m.lost)
        changed.push({ id: m.service_id, state, missing: !status });
    }
    if (changed.length === 0) return 0;
    // Again only where no job started meanwhile: a job's outcome is the newer word.
    // An instance missing from its endpoint's list was deleted behind the platform's back: lost
    // (until a rebuild, or an operator, puts it back).
    const r = await sql`update machines m set state = v.state,
        lost_at = case when v.missing then coalesce(m.lost_at, clock_timestamp()) end
      from unnest(${changed.map((c) => c.id)}::uuid[], ${changed.map((c) => c.state)}::text[],
                  ${changed.map((c) => String(c.missing))}::text[]::bool[]) as v(id, state, missing)
      where m.service_id = v.id and (m.state <> v.state or v.missing <> (m.lost_at is not null))
        and not exists (select 1 from jobs j where j.service_id = m.service_id and j.status = 'running')`;
    log.info("reconcile recorded states changed outside the platform", { machines: r.count });
    return r.count;
  }

  function start(everyMs: number) {
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<unknown> = Promise.resolve();
    const schedule = () => {
      timer = setTimeout(() => {
        running = pass()
          .catch((err) => log.warn("reconcile pass failed", { err }))
          .finally(() => {
            if (!stopped) schedule();
          });
      }, everyMs);
    };
    schedule();
    return {
      stop: async () => {
        stopped = true;
        clearTimeout(timer);
        await running;
      },
    };
  }

  return { pass, start };
}
