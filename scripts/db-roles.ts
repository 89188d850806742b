/**
 * One PostgreSQL role per service, owning its own schema and granted nothing else, so a service
 * (or whoever takes it over) cannot read or write another service's tables. The launcher makes
 * them with the superuser URL it was given; in Kubernetes the operator does (see README).
 *
 * Roles are cluster-wide while every test run has a database of its own, so creation is
 * idempotent and serialised by an advisory lock held in the cluster's `postgres` database.
 */
import { createHmac } from "node:crypto";
import postgres from "postgres";

export const roleOf = (schema: string) => `hb_${schema}`;

/**
 * A role's development password, derived from the superuser's credentials and the cluster's
 * address (never the database name, so every test database of one cluster agrees). Roles are
 * cluster-wide: a secret kept per checkout would make two checkouts, or a test run beside
 * `npm start`, reset each other's passwords under running stacks. Whoever can derive it already
 * holds the superuser's URL.
 */
function passwordOf(url: string, role: string): string {
  const u = new URL(url);
  const cluster = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}@${u.hostname}:${u.port}`;
  return createHmac("sha256", cluster).update(`hb-service-role:${role}`).digest("hex");
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Creates (or updates) each schema's role and gives it its schema in the database `url` names,
 * taking over anything an earlier superuser-run migration left there. Returns each service's
 * connection URL.
 */
export async function ensureServiceRoles(
  url: string,
  schemas: readonly string[],
): Promise<Record<string, string>> {
  const cluster = new URL(url);
  cluster.pathname = "/postgres";
  const admin = postgres(cluster.toString(), { max: 1, onnotice: () => {} });
  try {
    await admin.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(hashtext('hb:service-roles'))`;
      for (const schema of schemas) {
        const role = roleOf(schema);
        const exists = await tx`select 1 from pg_roles where rolname = ${role}`;
        const password = passwordOf(url, role).replace(/'/g, "''");
        const verb = exists.length ? "alter" : "create";
        await tx.unsafe(
          `${verb} role ${ident(role)} with login nosuperuser nocreatedb nocreaterole password '${password}'`,
        );
      }
    });
  } finally {
    await admin.end({ timeout: 5 });
  }
  await handOverSchemas(url, schemas);
  return Object.fromEntries(schemas.map((schema) => [schema, serviceDbUrl(url, schema)]));
}

/** The URL a service connects with: the superuser URL's database, as the schema's role. */
export function serviceDbUrl(url: string, schema: string): string {
  const u = new URL(url);
  u.username = roleOf(schema);
  u.password = passwordOf(url, roleOf(schema));
  return u.toString();
}

/**
 * Gives each schema, and every table, view and sequence in it, to the schema's role (hb_<schema>)
 * in the database `url` names, creating the schema when missing. Idempotent; the launcher runs it
 * after making the roles, the migration command (scripts/migrate.ts) after migrating as the
 * operator. The roles must exist: in Kubernetes the operator makes them (deploy/k8s/README.md).
 */
export async function handOverSchemas(url: string, schemas: readonly string[]): Promise<void> {
  const db = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await db.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(hashtext('hb:service-schemas'))`;
      for (const schema of schemas) {
        const [known] = await tx`select 1 as ok from pg_roles where rolname = ${roleOf(schema)}`;
        if (!known)
          throw new Error(`role ${roleOf(schema)} does not exist: create it first (deploy/k8s/README.md)`);
        const role = ident(roleOf(schema));
        await tx.unsafe(`create schema if not exists ${ident(schema)} authorization ${role}`);
        await tx.unsafe(`alter schema ${ident(schema)} owner to ${role}`);
        // Tables and sequences a superuser migrated before roles existed become the role's.
        const owned = await tx`
          select c.relname, c.relkind from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where n.nspname = ${schema} and c.relkind in ('r', 'p', 'v', 'm', 'S') and pg_get_userbyid(c.relowner) <> ${roleOf(schema)}
            and not (c.relkind = 'S' and exists (select 1 from pg_depend d where d.objid = c.oid and d.deptype in ('a', 'i')))`;
        for (const r of owned) {
          const kind =
            r.relkind === "S"
              ? "sequence"
              : r.relkind === "v"
                ? "view"
                : r.relkind === "m"
                  ? "materialized view"
                  : "table";
          await tx.unsafe(`alter ${kind} ${ident(schema)}.${ident(r.relname as string)} owner to ${role}`);
        }
      }
    });
  } finally {
    await db.end({ timeout: 5 });
  }
}
