import type { ServiceImpl } from "@connectrpc/connect";
import type {
  PaymentEventService,
  TopUpService,
  TopUpStaffService,
} from "@hb/contracts/hb/billing/v1/payments_pb";
import type { Logger, Sql } from "@hb/platform";
import type { AccountLookup } from "../account-lookup.ts";
import type { Units } from "../money.ts";
import type { CardProvider } from "./provider.ts";

/** The handlers of the three payment services (customers', staff's and the provider's). */
export type PaymentHandlers = Partial<
  ServiceImpl<typeof TopUpService> &
    ServiceImpl<typeof TopUpStaffService> &
    ServiceImpl<typeof PaymentEventService>
>;

export interface PaymentsDeps {
  sql: Sql;
  log: Logger;
  /** The card provider; undefined when none is configured (then only bank transfers are offered). */
  card: CardProvider | undefined;
  limits: { min: Units; max: Units };
  bankDetails: string;
  accounts: AccountLookup;
}
