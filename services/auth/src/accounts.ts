import {
  apiError,
  badRequest,
  billingCurrency,
  countryCode,
  isPermission,
  newId,
  notFound,
  prepared,
  type Sql,
  STAFF_PERMISSIONS,
} from "@hb/platform";
import { requireEmail } from "./email.ts";
import type { AuthHandlers } from "./handlers.ts";
import { type KeyChanges, noKeyChanges } from "./key-distribution.ts";
import {
  type CustomerRow,
  customerOut,
  type PersonRow,
  personOut,
  type SettingsRow,
  settingsOut,
} from "./records.ts";
import { customerStatusColumn } from "./statuses.ts";

function checkPermissions(perms: string[]): string[] {
  const bad = perms.find((p) => !isPermission(p));
  if (bad) throw badRequest("permissions", `Unknown permission "${bad}"`);
  return [...new Set(perms)];
}

function isUniqueViolation(err: unknown, index: string): boolean {
  const e = err as { code?: unknown; constraint_name?: unknown };
  return e.code === "23505" && e.constraint_name === index;
}

/** The index compares lower-cased addresses, so this holds for concurrent writers too. */
function emailTaken(err: unknown): never {
  if (isUniqueViolation(err, "customers_email_normalised")) {
    const message = "A customer with this email already exists";
    throw apiError("CONFLICT", message, { violations: [{ field: "email", message }] });
  }
  throw err;
}

/** One person per e-mail address in a team (migration 007): a second invite is a conflict. */
function memberTaken(err: unknown): never {
  if (isUniqueViolation(err, "people_team_email")) {
    const message = "Someone in this team already has this e-mail address";
    throw apiError("CONFLICT", message, { violations: [{ field: "email", message }] });
  }
  throw err;
}

/** A country as stored: ISO 3166-1 alpha-2 in capitals, or empty for none. */
const countryOf = (v: string) => (v.trim() ? countryCode("country", v.trim().toUpperCase()) : "");

const customerSelect = `select c.*, (select id from people p where p.customer_id = c.id and p.is_owner) as owner_person_id
  from customers c`;

/** Customers, people, staff and company settings: the admin command and the portal use these. */
export function createAccounts(sql: Sql, keys: KeyChanges = noKeyChanges): AuthHandlers {
  const getCustomer = async (id: string) => {
    const [c] = await sql.unsafe<CustomerRow[]>(`${customerSelect} where c.id = $1`, [id], prepared);
    if (!c) throw notFound("Customer");
    return c;
  };
  const getPerson = async (id: string) => {
    const [p] = await sql<PersonRow[]>`select * from people where id = ${id}`;
    if (!p) throw notFound("Person");
    return p;
  };

  return {
    async createCustomer(req) {
      // Ids, lengths and the currency's form are the request's declared rules (auth.proto).
      const name = req.name.trim();
      const email = requireEmail("email", req.email);
      const currency = billingCurrency("currency", (req.currency || "EUR").toUpperCase());
      const country = countryOf(req.country);
      const customerId = newId();
      const ownerId = newId();
      await sql
        .begin(async (tx) => {
          await tx`insert into customers (id, name, email, company, country, currency)
            values (${customerId}, ${name}, ${email}, ${req.company}, ${country}, ${currency})`;
          await tx`insert into people (id, customer_id, name, email, is_owner)
            values (${ownerId}, ${customerId}, ${name}, ${email}, true)`;
        })
        .catch(emailTaken);
      return {
        customer: customerOut(await getCustomer(customerId)),
        owner: personOut(await getPerson(ownerId)),
      };
    },

    async getCustomer(req) {
      const c = await getCustomer(req.customerId);
      const people = await sql<
        PersonRow[]
      >`select * from people where customer_id = ${c.id} and removed_at is null order by created_at`;
      return { customer: customerOut(c), people: people.map(personOut) };
    },

    async listCustomers(req) {
      const rows = req.email
        ? await sql.unsafe<CustomerRow[]>(
            `${customerSelect} where lower(c.email) = lower($1) order by c.created_at`,
            [req.email],
            prepared,
          )
        : // Newest first: a support desk looks for the customer who just signed up.
          await sql.unsafe<CustomerRow[]>(
            `${customerSelect} order by c.created_at desc, c.id desc limit 1000`,
          );
      return { customers: rows.map(customerOut) };
    },

    async updateCustomer(req) {
      // The rules of createCustomer; the currency is fixed once money has moved, so it is not here.
      const email = requireEmail("email", req.email);
      const country = countryOf(req.country);
      const updated = await sql`update customers
        set name = ${req.name.trim()}, email = ${email}, company = ${req.company.trim()}, country = ${country}
        where id = ${req.customerId} returning id`.catch(emailTaken);
      if (updated.length === 0) throw notFound("Customer");
      return { customer: customerOut(await getCustomer(req.customerId)) };
    },

    async setCustomerStatus(req) {
      const id = req.customerId;
      const status = customerStatusColumn(req.status);
      const updated = await sql`update customers set status = ${status}, status_reason = ${req.reason.trim()}
        where id = ${id} returning id`;
      if (updated.length === 0) throw notFound("Customer");
      await keys.customer(id);
      return { customer: customerOut(await getCustomer(id)) };
    },

    async lookupAccount(req) {
      const customer = await getCustomer(req.customerId);
      const [person] = req.personId
        ? await sql<PersonRow[]>`select * from people
            where id = ${req.personId} and customer_id = ${customer.id} and removed_at is null`
        : [];
      const [staff] = req.staffId
        ? await sql<{ permissions: string[] }[]>`select permissions from staff where id = ${req.staffId}`
        : [];
      return {
        customer: customerOut(customer),
        person: person ? personOut(person) : undefined,
        staffFound: staff !== undefined,
        staffPermissions: staff?.permissions ?? [],
      };
    },

    async createPerson(req) {
      const customer = await getCustomer(req.customerId);
      const id = newId();
      await sql`insert into people (id, customer_id, name, email, permissions)
        values (${id}, ${customer.id}, ${req.name.trim()}, ${requireEmail("email", req.email)},
                ${checkPermissions(req.permissions)})`.catch(memberTaken);
      return { person: personOut(await getPerson(id)) };
    },

    async getPerson(req) {
      const person = await getPerson(req.personId);
      return { person: personOut(person), customer: customerOut(await getCustomer(person.customer_id)) };
    },

    async setPermissions(req) {
      const person = await getPerson(req.personId);
      if (person.is_owner) throw apiError("CONFLICT", "The account owner always holds every permission");
      await sql`update people set permissions = ${checkPermissions(req.permissions)} where id = ${person.id}`;
      await keys.customer(person.customer_id);
      return { person: personOut(await getPerson(person.id)) };
    },

    async createStaff(req) {
      const bad = req.permissions.find((p) => !(STAFF_PERMISSIONS as readonly string[]).includes(p));
      if (bad) throw badRequest("permissions", `Unknown staff permission "${bad}"`);
      const id = newId();
      const [row] = await sql<{ id: string; name: string; email: string; permissions: string[] }[]>`
        insert into staff (id, name, email, permissions)
        values (${id}, ${req.name.trim()}, ${requireEmail("email", req.email)}, ${[...new Set(req.permissions)]})
        on conflict (email) do update set name = excluded.name, permissions = excluded.permissions
        returning id, name, email, permissions`;
      return { staff: row };
    },

    async getSettings() {
      const [s] = await sql<SettingsRow[]>`select * from settings`;
      return { settings: settingsOut(s) };
    },

    async updateSettings(req) {
      const [s] = await sql<SettingsRow[]>`
        update settings set
          customer_api_enabled = coalesce(${req.customerApiEnabled ?? null}::boolean, customer_api_enabled),
          hourly_request_limit = coalesce(${req.hourlyRequestLimit ?? null}::int, hourly_request_limit),
          active_key_limit = coalesce(${req.activeKeyLimit ?? null}::int, active_key_limit),
          inventory_module = coalesce(${req.inventoryModule ?? null}::boolean, inventory_module),
          vps_module = coalesce(${req.vpsModule ?? null}::boolean, vps_module)
        returning *`;
      await keys.settings();
      return { settings: settingsOut(s) };
    },
  };
}
