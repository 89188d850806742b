import { type CustomerStatus, CustomerStatusSchema } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { enumWord } from "@hb/platform";
import type { z } from "zod";
import type { account } from "../wire/account.ts";

type WireStatus = z.infer<typeof account>["status"];

/** The account's status as the spec writes it (active, suspended). */
export function customerStatusWire(s: CustomerStatus): WireStatus {
  const word = enumWord(CustomerStatusSchema, s);
  // Auth always sets a status; an unknown one is a defect, not something to show.
  if (word !== "active" && word !== "suspended") throw new Error(`unknown customer status ${s}`);
  return word;
}
