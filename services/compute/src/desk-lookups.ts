/**
 * The support desk's look-ups in compute (ComputeDeskService). The search by IP address (ComputeDeskService.DeskFindAddress, issue 29 §6): which
 * machines hold an address. Addresses are kept as assigned (ip_addresses.address, no prefix), so
 * the match is exact; an IPv6 address is compared in the form PostgreSQL's inet gives it, so
 * `2001:DB8::1` finds `2001:db8::1`.
 */
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { JobStatus } from "@hb/contracts/hb/compute/v1/jobs_pb";
import { PAGE_SIZE, type Sql } from "@hb/platform";
import type { Handlers } from "./context.ts";
import { createJobRecords } from "./job-records.ts";
import { ipsOf, type MachineRow, machineSummary } from "./machines.ts";

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

/**
 * A service's machine for the staff service page (DeskGetMachine): the machine, its latest jobs
 * within the customer's job retention, and the events compute published that name the service
 * (found in the outbox by the service id in their payload: a scan, bounded by the outbox's
 * retention; a desk page, not a hot path).
 */
export function createDeskMachine(sql: Sql): Handlers {
  const records = createJobRecords(sql);
  return {
    async deskGetMachine(req) {
      const [machines, ips, jobs, events] = await Promise.all([
        sql<
          MachineRow[]
        >`select * from machines where service_id = ${req.serviceId} and customer_id = ${req.customerId}`,
        ipsOf(sql, req.serviceId),
        records.list(req.customerId, {
          status: JobStatus.UNSPECIFIED,
          serviceId: req.serviceId,
          action: "",
          page: 1,
          limit: PAGE_SIZE.default,
        }),
        sql<{ subject: string; created_at: Date }[]>`
          select subject, created_at from outbox
          where position(convert_to(${req.serviceId}, 'UTF8') in payload) > 0
          order by created_at desc limit 20`,
      ]);
      return {
        machine: machines[0] ? machineSummary(machines[0], ips) : undefined,
        jobs: machines[0] ? jobs.jobs : [],
        events: events.map((e) => ({ subject: e.subject, at: timestampFromDate(e.created_at) })),
      };
    },
  };
}
