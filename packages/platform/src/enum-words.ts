import type { DescEnum } from "@bufbuild/protobuf";
import type { GenEnum } from "@bufbuild/protobuf/codegenv2";

/**
 * The enum value a lowercase word names, by the value's name without its enum prefix
 * ("vps" → PRODUCT_KIND_VPS, "pending_payment" → SERVICE_STATUS_PENDING_PAYMENT), for command-line
 * flags and test fixtures that speak the words. Throws on a word the enum does not have.
 */
export function enumFromWord<E extends number>(desc: GenEnum<E>, word: string): E {
  const value = desc.values.find((v) => v.localName === word.toUpperCase() && v.number !== 0);
  if (!value) throw new Error(`"${word}" is not one of ${wordsOf(desc).join(", ")}`);
  return value.number as E;
}

/** The words of an enum's values (UNSPECIFIED left out). */
export const wordsOf = (desc: DescEnum): string[] =>
  desc.values.filter((v) => v.number !== 0).map((v) => v.localName.toLowerCase());
