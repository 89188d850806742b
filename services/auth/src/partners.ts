import { randomBytes } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { type PartnerSchema, PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { apiError, notFound, type Sql } from "@hb/platform";
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
export function createPartners(sql: Sql): Partial<ServiceImpl<typeof AuthService>> {
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
