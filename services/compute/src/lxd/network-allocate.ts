import type { Sql } from "@hb/platform";
import type { JobRow } from "../driver.ts";
import type { MachineRow } from "../machines.ts";
import { freeAddress, type MachineNetwork, type Pool, subnetAt, subnetCount } from "./network.ts";

/**
 * The customer's network on the endpoint (made on its first machine: the lowest free subnet of the
 * pool) and the lowest address on it no machine and no running job holds, written into the job's
 * progress in the same transaction. The lock makes concurrent builds choose one after another, so
 * two never take the same subnet or address.
 */
export async function allocateNetwork(
  sql: Sql,
  pool: Pool,
  prefix: number,
  job: JobRow,
  m: MachineRow,
  endpoint: string,
): Promise<MachineNetwork> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext('lxd-networks'))`;
    let [row] = await tx<{ subnet_index: number }[]>`
      select subnet_index from lxd_networks where endpoint = ${endpoint} and customer_id = ${m.customer_id}`;
    if (!row) {
      [row] = await tx<{ subnet_index: number }[]>`
        select i as subnet_index from generate_series(0, ${subnetCount(pool, prefix) - 1}::int) i
        where not exists (select 1 from lxd_networks where endpoint = ${endpoint} and subnet_index = i)
        order by i limit 1`;
      if (!row) throw new Error("Every customer network of the LXD network pool is taken");
      await tx`insert into lxd_networks (endpoint, customer_id, subnet_index)
        values (${endpoint}, ${m.customer_id}, ${row.subnet_index})`;
    }
    const subnet = subnetAt(pool, prefix, row.subnet_index);
    const taken = await tx<{ address: string }[]>`
      select driver_state->'network'->>'address' as address from machines
        where customer_id = ${m.customer_id} and has_instance and driver_state->'network'->>'bridge' = ${subnet.bridge}
      union
      select driver_state->'network'->>'address' from jobs
        where status = 'running' and customer_id = ${m.customer_id} and id <> ${job.id}
          and driver_state->'network'->>'bridge' = ${subnet.bridge}`;
    const address = freeAddress(
      subnet,
      taken.map((t) => t.address),
    );
    if (!address) throw new Error(`The customer's network ${subnet.subnet} has no free address`);
    const net: MachineNetwork = {
      bridge: subnet.bridge,
      subnet: subnet.subnet,
      gateway: subnet.gateway,
      address,
    };
    await tx`update jobs set driver_state = driver_state || ${JSON.stringify({ network: net })}::text::jsonb
      where id = ${job.id}`;
    return net;
  });
}
