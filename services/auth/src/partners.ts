import { randomBytes } from "node:crypto";
import type { ServiceImpl } from "@connectrpc/connect";
import type { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { apiError, badRequest, isUuid, notFound, type Sql } from "@hb/platform";
import { requireId } from "./accounts.ts";

interface PartnerRow {
  customer_id: string;
  status: string;
  signing_secret: string | null;
  secret_rotated_at: Date | null;
  created_at: Date;
}

const STATUSES = ["pending", "active", "suspended"];
const newSecret = () => `whsec_${randomBytes(32).toString("base64url")}`;

const partnerOut = (p: PartnerRow) => ({
  customerId: p.customer_id,
  status: p.status,
  hasSecret: p.signing_secret !== null,
  secretRotatedAt: p.secret_rotated_at?.toISOString() ?? "",
  createdAt: p.created_at.toISOString(),
});

/** Reseller partner profiles: status and the signing secret. */
export function createPartners(sql: Sql): Partial<ServiceImpl<typeof AuthService>> {
  const get = async (customerId: string) => {
    const [p] = await sql<
      PartnerRow[]
    >`select * from partners where customer_id = ${requireId("customer_id", customerId)}`;
    if (!p) throw notFound("Partner profile");
    return p;
  };
  return {
    async createPartner(req) {
      const status = req.status || "pending";
      if (!STATUSES.includes(status))
        throw badRequest("status", "status must be pending, active or suspended");
      const [c] = await sql`select 1 from customers where id = ${requireId("customer_id", req.customerId)}`;
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
      if (!STATUSES.includes(req.status))
        throw badRequest("status", "status must be pending, active or suspended");
      await get(req.customerId);
      const [p] = await sql<
        PartnerRow[]
      >`update partners set status = ${req.status} where customer_id = ${req.customerId} returning *`;
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
      const ids = req.customerIds.filter(isUuid);
      if (ids.length === 0) return { partners: [] };
      const rows = await sql<PartnerRow[]>`select * from partners where customer_id in ${sql(ids)}`;
      return {
        partners: rows.map((p) => ({
          customerId: p.customer_id,
          status: p.status,
          signingSecret: p.signing_secret ?? "",
        })),
      };
    },
  };
}
