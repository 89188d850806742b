import type { MessageInitShape } from "@bufbuild/protobuf";
import type { KeyEntrySchema, KeySettingsSchema } from "@hb/contracts/hb/auth/v1/key_distribution_pb";
import { prepared, type Sql } from "@hb/platform";
import { customerStatusOf } from "./statuses.ts";

export type KeyEntryInit = MessageInitShape<typeof KeyEntrySchema>;
export type KeySettingsInit = MessageInitShape<typeof KeySettingsSchema>;

interface EntryRow {
  prefix: string;
  key_id: string;
  customer_id: string;
  person_id: string;
  label: string;
  scopes: string[];
  ip_allowlist: string[];
  expires_on: string | null;
  revoked: boolean;
  is_owner: boolean;
  permissions: string[];
  person_name: string;
  person_email: string;
  account_status: string;
  currency: string;
}

// The same join Verify reads, without the secret hash and the partner's signing secret: signed
// (reseller) routes still ask auth, so neither ever leaves it.
const entryColumns = `k.prefix, k.id as key_id, k.customer_id, k.person_id, k.label, k.scopes, k.ip_allowlist,
  to_char(k.expires_on, 'YYYY-MM-DD') as expires_on, k.revoked_at is not null as revoked,
  p.is_owner, p.permissions, p.name as person_name, p.email as person_email,
  c.status as account_status, c.currency
  from api_keys k join people p on p.id = k.person_id join customers c on c.id = k.customer_id`;

function entryOut(r: EntryRow): KeyEntryInit {
  return {
    prefix: r.prefix,
    keyId: r.key_id,
    customerId: r.customer_id,
    personId: r.person_id,
    label: r.label,
    scopes: r.scopes,
    ipAllowlist: r.ip_allowlist,
    expiresOn: r.expires_on ? { seconds: BigInt(Date.parse(`${r.expires_on}T00:00:00Z`) / 1000) } : undefined,
    revoked: r.revoked,
    isOwner: r.is_owner,
    permissions: r.permissions,
    personName: r.person_name,
    personEmail: r.person_email,
    accountStatus: customerStatusOf(r.account_status),
    currency: r.currency,
  };
}

export async function loadAllEntries(sql: Sql): Promise<KeyEntryInit[]> {
  return (await sql.unsafe<EntryRow[]>(`select ${entryColumns}`)).map(entryOut);
}

export async function loadCustomerEntries(sql: Sql, customerId: string): Promise<KeyEntryInit[]> {
  return (
    await sql.unsafe<EntryRow[]>(`select ${entryColumns} where k.customer_id = $1`, [customerId], prepared)
  ).map(entryOut);
}

export async function loadKeySettings(sql: Sql): Promise<KeySettingsInit> {
  const [s] = await sql<
    {
      customer_api_enabled: boolean;
      hourly_request_limit: number;
      inventory_module: boolean;
      vps_module: boolean;
    }[]
  >`select customer_api_enabled, hourly_request_limit, inventory_module, vps_module from settings`;
  return {
    customerApiEnabled: s.customer_api_enabled,
    hourlyRequestLimit: s.hourly_request_limit,
    inventoryModule: s.inventory_module,
    vpsModule: s.vps_module,
  };
}
