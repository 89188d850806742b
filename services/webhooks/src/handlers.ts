import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Client, ServiceImpl } from "@connectrpc/connect";
import type { PartnerLookupService } from "@hb/contracts/hb/auth/v1/partner_lookup_pb";
import { DeliveryStatus, type WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import type { WebhooksStaffService } from "@hb/contracts/hb/webhooks/v1/webhooks_staff_pb";
import { apiError, badRequest, type Logger, newId, type Sql } from "@hb/platform";
import { parseDestination } from "./allowed-destinations.ts";
import { checkWebhookUrl } from "./endpoint.ts";
import { type PassOptions, runPass } from "./pass.ts";

// Partner ids, the URL's scheme and length and the settings' ranges are the requests' declared
// rules (webhooks.proto); what needs the database or DNS stays here.

/** The deliveries table's status column and the contract's enum. */
const deliveryStatuses: Record<string, DeliveryStatus> = {
  pending: DeliveryStatus.PENDING,
  delivered: DeliveryStatus.DELIVERED,
  failed: DeliveryStatus.FAILED,
  cancelled: DeliveryStatus.CANCELLED,
};

/** At most this many allowed destinations: they are development exceptions, not a directory. */
const MAX_ALLOWED_DESTINATIONS = 100;

interface SettingsRow {
  max_attempts: number;
  base_delay_seconds: number;
  allowed_destinations: string[];
}

const settingsOut = (s: SettingsRow) => ({
  settings: {
    maxAttempts: s.max_attempts,
    baseDelaySeconds: s.base_delay_seconds,
    allowedDestinations: s.allowed_destinations,
  },
});

const destinations = (field: string, entries: string[]) =>
  entries.map((e) => {
    const d = parseDestination(e);
    if (!d) throw badRequest(field, `${e.slice(0, 200)} is not host:port (IPv6 in brackets, port 1-65535)`);
    return d;
  });

interface DeliveryRow {
  id: string;
  partner_id: string;
  event: string;
  status: string;
  attempts: number;
  response_code: number | null;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
  next_attempt_at: Date;
}

export function createHandlers(
  sql: Sql,
  auth: Client<typeof PartnerLookupService>,
  log: Logger,
  opts: PassOptions,
): Partial<ServiceImpl<typeof WebhooksService> & ServiceImpl<typeof WebhooksStaffService>> {
  return {
    async setWebhookUrl(req) {
      const partnerId = req.partnerId;
      if (req.url.trim() === "") {
        await sql`delete from partner_webhooks where partner_id = ${partnerId}`;
        return { url: "" };
      }
      const [{ allowed_destinations }] = await sql<
        { allowed_destinations: string[] }[]
      >`select allowed_destinations from programme_settings`;
      const url = await checkWebhookUrl(req.url, new Set(allowed_destinations));
      await sql`insert into partner_webhooks (partner_id, url) values (${partnerId}, ${url})
        on conflict (partner_id) do update set url = excluded.url, updated_at = clock_timestamp()`;
      return { url };
    },

    async getWebhook(req) {
      const [row] = await sql<
        { url: string }[]
      >`select url from partner_webhooks where partner_id = ${req.partnerId}`;
      return { url: row?.url ?? "" };
    },

    async queueTest(req) {
      const partnerId = req.partnerId;
      const [row] = await sql`select 1 from partner_webhooks where partner_id = ${partnerId}`;
      if (!row)
        throw apiError(
          "CONFLICT",
          "No webhook URL is on file; set one with PUT /api/v1/reseller/account/webhook",
        );
      const id = newId();
      await sql`with stored as (insert into deliveries (id, partner_id, event_id, event, data)
          values (${id}, ${partnerId}, ${id}, 'webhook.test',
                  ${sql.json({ message: "This is a test event from the reseller programme.", partnerId } as never)})
          returning partner_id)
        insert into partner_queues (partner_id) select partner_id from stored on conflict do nothing`;
      return { deliveryId: id };
    },

    async listDeliveries(req) {
      const limit = Math.min(Math.max(req.limit || 100, 1), 1000);
      const rows = await sql<DeliveryRow[]>`
        select * from deliveries where partner_id = ${req.partnerId} order by created_at desc limit ${limit}`;
      return {
        deliveries: rows.map((d) => ({
          id: d.id,
          partnerId: d.partner_id,
          event: d.event,
          status: deliveryStatuses[d.status] ?? DeliveryStatus.UNSPECIFIED,
          attempts: d.attempts,
          responseCode: d.response_code ?? 0,
          lastError: d.last_error ?? "",
          createdAt: timestampFromDate(d.created_at),
          deliveredAt: d.delivered_at ? timestampFromDate(d.delivered_at) : undefined,
          nextAttemptAt: d.status === "pending" ? timestampFromDate(d.next_attempt_at) : undefined,
        })),
      };
    },

    async getProgrammeSettings() {
      const [s] = await sql<SettingsRow[]>`select * from programme_settings`;
      return settingsOut(s);
    },

    async updateProgrammeSettings(req) {
      const add = destinations("add_allowed_destinations", req.addAllowedDestinations);
      const remove = destinations("remove_allowed_destinations", req.removeAllowedDestinations);
      // One statement on the one row: concurrent changes (tests registering their receivers)
      // queue on its lock and each applies to the other's result.
      const [s] = await sql<SettingsRow[]>`
        update programme_settings set
          max_attempts = coalesce(${req.maxAttempts ?? null}::int, max_attempts),
          base_delay_seconds = coalesce(${req.baseDelaySeconds ?? null}::int, base_delay_seconds),
          allowed_destinations = array(
            select distinct d collate "C"
            from unnest(case when ${req.clearAllowedDestinations}::boolean then '{}'::text[] else allowed_destinations end
                        || ${add}::text[]) as d
            where d <> all(${remove}::text[])
            order by 1)
        returning *`.catch((err: { constraint_name?: string }) => {
        if (err.constraint_name === "allowed_destinations_bounded") {
          throw badRequest(
            "add_allowed_destinations",
            `At most ${MAX_ALLOWED_DESTINATIONS} allowed destinations`,
          );
        }
        throw err;
      });
      return settingsOut(s);
    },

    async runPass() {
      const { done } = await runPass(sql, auth, log, opts);
      return { attempted: await done };
    },
  };
}
