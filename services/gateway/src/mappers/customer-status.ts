import { type CustomerStatus, CustomerStatusSchema } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { CUSTOMER_STATUS_WORDS } from "../wire/words.ts";
import { enumWords } from "./contract.ts";

const customerStatuses = enumWords("customer status", CustomerStatusSchema, CUSTOMER_STATUS_WORDS);

/** The account's status as the spec writes it (active, suspended); auth always sets one. */
export const customerStatusWire = (s: CustomerStatus) => customerStatuses.wire(s);
