import type postgres from "postgres";
import { type Account, newMachine } from "../helpers.ts";

/**
 * A VPS whose build is still running, held there (its job pushed an hour out) until `release`.
 * The simulated build takes a few hundred milliseconds, so a machine the hold misses is replaced.
 * `db` is compute's own connection (serviceSql("compute")).
 */
export async function heldBuild(db: postgres.Sql, acct: Account) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const id = await newMachine(acct, { state: "creating" });
    const held = await db`update compute.jobs set due_at = now() + interval '1 hour'
      where service_id = ${id} and action = 'build' and status = 'running'
        and (lease_until is null or lease_until < clock_timestamp()) returning id`;
    if (held.length) {
      return {
        id,
        release: () =>
          db`update compute.jobs set due_at = now() where service_id = ${id} and action = 'build'`,
      };
    }
  }
  throw new Error("no build could be held: the simulated builds finish before the hold");
}
