import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { CustomerSchema, PersonSchema, SettingsSchema } from "@hb/contracts/hb/auth/v1/accounts_pb";
import {
  type ApiKeySchema,
  ApiKeyStatus,
  type RequestLogEntrySchema,
} from "@hb/contracts/hb/auth/v1/api_keys_pb";
import { ALL_PERMISSIONS, displayKey } from "@hb/platform";
import { customerStatusOf } from "./statuses.ts";

/** Rows of the auth schema and their wire shapes. */
export interface CustomerRow {
  id: string;
  name: string;
  email: string;
  company: string;
  country: string;
  currency: string;
  status: string;
  status_reason: string;
  created_at: Date;
  owner_person_id?: string | null;
}
export interface PersonRow {
  id: string;
  customer_id: string;
  name: string;
  email: string;
  is_owner: boolean;
  permissions: string[];
  created_at: Date;
  /** Selected with `select *`; only whether it is set leaves auth. */
  password_hash?: string | null;
}
export interface KeyRow {
  id: string;
  customer_id: string;
  person_id: string;
  label: string;
  prefix: string;
  scopes: string[];
  ip_allowlist: string[];
  /** 00:00 UTC of the last day the key works. */
  expires_on: Date | null;
  expired: boolean;
  revoked_at: Date | null;
  last_used_at: Date | null;
  last_used_ip: string | null;
  created_at: Date;
}
export interface LogRow {
  key_id: string;
  method: string;
  endpoint: string;
  status_code: number;
  source_ip: string;
  duration_ms: number;
  at: Date;
}
export interface SettingsRow {
  customer_api_enabled: boolean;
  hourly_request_limit: number;
  active_key_limit: number;
  inventory_module: boolean;
  vps_module: boolean;
}

/** Columns to select for a KeyRow (expires_on as 00:00 UTC of the date, expired computed in UTC). */
export const keyColumns = `id, customer_id, person_id, label, prefix, scopes, ip_allowlist,
  expires_on::timestamp at time zone 'utc' as expires_on,
  coalesce(expires_on < (now() at time zone 'utc')::date, false) as expired,
  revoked_at, last_used_at, last_used_ip, created_at`;

export const customerOut = (r: CustomerRow): MessageInitShape<typeof CustomerSchema> => ({
  id: r.id,
  name: r.name,
  email: r.email,
  company: r.company,
  country: r.country,
  currency: r.currency,
  status: customerStatusOf(r.status),
  ownerPersonId: r.owner_person_id ?? "",
  createdAt: timestampFromDate(r.created_at),
  statusReason: r.status_reason,
});

export const personOut = (r: PersonRow): MessageInitShape<typeof PersonSchema> => ({
  id: r.id,
  customerId: r.customer_id,
  name: r.name,
  email: r.email,
  isOwner: r.is_owner,
  permissions: r.is_owner ? [...ALL_PERMISSIONS] : r.permissions,
  createdAt: timestampFromDate(r.created_at),
  hasPassword: Boolean(r.password_hash),
});

export const keyOut = (r: KeyRow): MessageInitShape<typeof ApiKeySchema> => ({
  id: r.id,
  customerId: r.customer_id,
  personId: r.person_id,
  label: r.label,
  prefix: r.prefix,
  display: displayKey(r.prefix),
  scopes: r.scopes,
  ipAllowlist: r.ip_allowlist,
  expiresOn: r.expires_on ? timestampFromDate(r.expires_on) : undefined,
  status: r.revoked_at ? ApiKeyStatus.REVOKED : r.expired ? ApiKeyStatus.EXPIRED : ApiKeyStatus.ACTIVE,
  revokedAt: r.revoked_at ? timestampFromDate(r.revoked_at) : undefined,
  lastUsedAt: r.last_used_at ? timestampFromDate(r.last_used_at) : undefined,
  lastUsedIp: r.last_used_ip ?? "",
  createdAt: timestampFromDate(r.created_at),
});

export const logOut = (r: LogRow): MessageInitShape<typeof RequestLogEntrySchema> => ({
  keyId: r.key_id,
  method: r.method,
  endpoint: r.endpoint,
  statusCode: r.status_code,
  sourceIp: r.source_ip,
  durationMs: r.duration_ms,
  time: timestampFromDate(r.at),
});

export const settingsOut = (r: SettingsRow): MessageInitShape<typeof SettingsSchema> => ({
  customerApiEnabled: r.customer_api_enabled,
  hourlyRequestLimit: r.hourly_request_limit,
  activeKeyLimit: r.active_key_limit,
  inventoryModule: r.inventory_module,
  vpsModule: r.vps_module,
});
