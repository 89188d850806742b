import { type CustomerStatus, CustomerStatusSchema } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { type PartnerStatus, PartnerStatusSchema } from "@hb/contracts/hb/auth/v1/partners_pb";
import { enumOfWord, enumWord } from "@hb/platform";

/** The auth schema's status columns hold the enums' words (active, suspended, pending). */
export const customerStatusOf = (column: string) => enumOfWord<CustomerStatus>(CustomerStatusSchema, column);
export const partnerStatusOf = (column: string) => enumOfWord<PartnerStatus>(PartnerStatusSchema, column);
export const customerStatusColumn = (s: CustomerStatus) => enumWord(CustomerStatusSchema, s);
export const partnerStatusColumn = (s: PartnerStatus) => enumWord(PartnerStatusSchema, s);
