/**
 * The support desk's search by IP address (ComputeDeskService.DeskFindAddress, issue 29 §6): which
 * machines hold an address. Addresses are kept as assigned (ip_addresses.address, no prefix), so
 * the match is exact; an IPv6 address is compared in the form PostgreSQL's inet gives it, so
 * `2001:DB8::1` finds `2001:db8::1`.
 */
import type { Sql } from "@hb/platform";
import type { Handlers } from "./context.ts";

export function createDeskSearch(sql: Sql): Handlers {
  return {
    async deskFindAddress(req) {
      const rows = await sql<
        { service_id: string; customer_id: string; address: string; hostname: string }[]
      >`
        select a.service_id::text, m.customer_id::text, a.address, m.hostname
        from ip_addresses a join machines m on m.service_id = a.service_id
        where host(a.address::inet) = host(${req.address}::inet)
        order by m.created_at desc limit 20`;
      return {
        holders: rows.map((r) => ({
          serviceId: r.service_id,
          customerId: r.customer_id,
          address: r.address,
          hostname: r.hostname,
        })),
      };
    },
  };
}
