/**
 * The support desk's search of people by e-mail (AuthStaffService.SearchPeople, issue 29 §6): an
 * owner or a team member found by part of their address, an exact address first. Removed team
 * members are not found (they can no longer sign in or act).
 */
import type { Sql } from "@hb/platform";
import type { AuthHandlers } from "./handlers.ts";

/** A LIKE pattern that matches `q` literally anywhere. */
const contains = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export function createPeopleSearch(sql: Sql): AuthHandlers {
  return {
    async searchPeople(req) {
      const q = req.email.trim();
      const rows = await sql<
        { id: string; customer_id: string; name: string; email: string; is_owner: boolean }[]
      >`
        select id::text, customer_id::text, name, email, is_owner from people
        where removed_at is null and email ilike ${contains(q)}
        order by (lower(email) = lower(${q})) desc, created_at desc limit 20`;
      return {
        people: rows.map((r) => ({
          personId: r.id,
          customerId: r.customer_id,
          name: r.name,
          email: r.email,
          isOwner: r.is_owner,
        })),
      };
    },
  };
}
