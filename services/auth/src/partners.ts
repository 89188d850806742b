import { randomBytes } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { type PartnerSchema, PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import type { PortalService } from "@hb/contracts/hb/auth/v1/portal_pb";
import { apiError, notFound, type Sql } from "@hb/platform";
import type { AuthHandlers } from "./handlers.ts";
import { partnerStatusColumn, partnerStatusOf } from "./statuses.ts";

interface PartnerRow {
  customer_id: string;
  status: string;
  signing_secret: string | null;
  secret_rotated_at: Date | null;
  created_at: Date;
}

const newSecret = () => `whsec_${randomBytes(32).toString("base64url")}`;

const partnerOut = (p: PartnerRow): MessageInitShape<typeof PartnerSchema> => ({
  customerId: p.customer_id,
  status: partnerStatusOf(p.status),
  hasSecret: p.signing_secret !== null,
  secretRotatedAt: p.secret_rotated_at ? timestampFromDate(p.secret_rotated_at) : undefined,
  createdAt: timestampFromDate(p.created_at),
});

/** Reseller partner profiles: status and the signing secret. */
export function createPartners(sql: Sql): AuthHandlers {
  const get = async (customerId: string) => {
    const [p] = await sql<PartnerRow[]>`select * from partners where customer_id = ${customerId}`;
    if (!p) throw notFound("Partner profile");
    return p;
  };
  return {
    async createPartner(req) {
      const status = partnerStatusColumn(req.status || PartnerStatus.PENDING);
      const [c] = await sql`select 1 from customers where id = ${req.customerId}`;
      if (!c) throw notFound("Customer");
      const secret = newSecret();
      const rows = await sql<PartnerRow[]>`
        insert into partners (customer_id, status, signing_secret, secret_rotated_at)
        values (${req.customerId}, ${status}, ${secret}, clock_timestamp())
        on conflict (customer_id) do nothing returning *`;
      if (rows.length === 0) throw apiError("CONFLICT", "This customer already has a partner profile");
      return { partner: partnerOut(rows[0]), signingSecret: secret };
    },

    async setPartnerStatus(req) {
      await get(req.customerId);
      const [p] = await sql<
        PartnerRow[]
      >`update partners set status = ${partnerStatusColumn(req.status)} where customer_id = ${req.customerId} returning *`;
      return { partner: partnerOut(p) };
    },

    async rotatePartnerSecret(req) {
      await get(req.customerId);
      // The old secret stops working with this update: no overlap window.
      const secret = req.clear ? null : newSecret();
      const [p] = await sql<PartnerRow[]>`
        update partners set signing_secret = ${secret}, secret_rotated_at = clock_timestamp()
        where customer_id = ${req.customerId} returning *`;
      return { partner: partnerOut(p), signingSecret: secret ?? "" };
    },

    async getPartnerForDelivery(req) {
      if (req.customerIds.length === 0) return { partners: [] };
      const rows = await sql<
        PartnerRow[]
      >`select * from partners where customer_id in ${sql(req.customerIds)}`;
      return {
        partners: rows.map((p) => ({
          customerId: p.customer_id,
          status: partnerStatusOf(p.status),
          signingSecret: p.signing_secret ?? "",
        })),
      };
    },
  };
}

/** Partner profiles with their customer, for the admin panel and the portal (no secret). */
export function createPartnerListing(sql: Sql): Pick<ServiceImpl<typeof PortalService>, "listPartners"> {
  return {
    async listPartners(req) {
      const rows = await sql<(PartnerRow & { name: string; email: string; company: string })[]>`
        select p.customer_id, p.status, p.signing_secret, p.secret_rotated_at, p.created_at,
               c.name, c.email, c.company
        from partners p join customers c on c.id = p.customer_id
        where (${req.customerId} = '' or p.customer_id::text = ${req.customerId})
          and (${req.status === PartnerStatus.UNSPECIFIED} or p.status = ${partnerStatusColumn(req.status)})
        order by p.created_at desc, p.customer_id
        limit 1000`;
      return {
        partners: rows.map((r) => ({
          partner: partnerOut(r),
          customerName: r.name,
          customerEmail: r.email,
          company: r.company,
        })),
      };
    },
  };
}
