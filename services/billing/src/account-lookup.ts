import type { Client } from "@connectrpc/connect";
import type { AccountLookupService } from "@hb/contracts/hb/auth/v1/account_lookup_pb";

/** What billing's staff operations must know of an account, which auth owns. */
export interface AccountFacts {
  /** The customer's currency (ISO 4217): every price and credit of the account is in it. */
  currency: string;
  /** The person asked about is a (not removed) person of this customer. */
  personBelongs: boolean;
  /** The staff member asked about: undefined when there is no such staff member. */
  staffPermissions?: string[];
}

/** NOT_FOUND (auth's) when there is no such customer. */
export type AccountLookup = (
  customerId: string,
  personId?: string,
  staffId?: string,
) => Promise<AccountFacts>;

/** Asks auth's AccountLookupService, which only billing may call. */
export function accountLookup(client: Client<typeof AccountLookupService>): AccountLookup {
  return async (customerId, personId = "", staffId = "") => {
    const r = await client.lookupAccount({ customerId, personId, staffId });
    return {
      currency: r.customer?.currency ?? "",
      personBelongs: r.person !== undefined,
      staffPermissions: r.staffFound ? r.staffPermissions : undefined,
    };
  };
}
