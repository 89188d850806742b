import type { ServiceImpl } from "@connectrpc/connect";
import type { AccountLookupService } from "@hb/contracts/hb/auth/v1/account_lookup_pb";
import type { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import type { AuthStaffService } from "@hb/contracts/hb/auth/v1/auth_staff_pb";
import type { PartnerLookupService } from "@hb/contracts/hb/auth/v1/partner_lookup_pb";

/**
 * Some of auth's handlers, whichever of its services they belong to; main binds the union to each
 * service definition, and each definition serves only its own methods.
 */
export type AuthHandlers = Partial<
  ServiceImpl<typeof AuthService> &
    ServiceImpl<typeof AuthStaffService> &
    ServiceImpl<typeof PartnerLookupService> &
    ServiceImpl<typeof AccountLookupService>
>;
