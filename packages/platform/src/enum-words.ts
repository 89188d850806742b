import type { DescEnum } from "@bufbuild/protobuf";

/**
 * The one mapping between a contract enum and the word the spec, the database and the wire use
 * for it: the value's name without the enum's prefix, in lower case
 * (SERVICE_STATUS_PENDING_PAYMENT ↔ pending_payment, PAYMENT_MODE_CREDIT ↔ credit).
 */
export function enumWord(desc: DescEnum, value: number): string {
  const v = desc.value[value];
  return v && v.number !== 0 ? v.localName.toLowerCase() : "";
}

const byWord = new WeakMap<DescEnum, Map<string, number>>();

/**
 * The enum value a word names; 0 (_UNSPECIFIED) for a word the enum does not have. One map
 * look-up (built once per enum): auth's Verify uses it on every request.
 */
export function enumOfWord<E extends number>(desc: DescEnum, word: string): E {
  let words = byWord.get(desc);
  if (!words) {
    words = new Map(
      desc.values.filter((v) => v.number !== 0).map((v) => [v.localName.toLowerCase(), v.number]),
    );
    byWord.set(desc, words);
  }
  return (words.get(word) ?? 0) as E;
}

/**
 * The enum value a word names, for command-line flags and test fixtures that speak the words;
 * throws (listing the words) on a word the enum does not have instead of answering _UNSPECIFIED.
 */
export function enumFromWord<E extends number>(desc: DescEnum, word: string): E {
  const value = enumOfWord<E>(desc, word);
  if (value === 0) throw new Error(`"${word}" is not one of ${wordsOf(desc).join(", ")}`);
  return value;
}

/** The words of an enum's values (UNSPECIFIED left out). */
export const wordsOf = (desc: DescEnum): string[] =>
  desc.values.filter((v) => v.number !== 0).map((v) => v.localName.toLowerCase());
