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

/**
 * Both directions between a contract enum and its words, as a wire that refuses what it does not
 * know reads them: `words` (value → word), `value(word)` (undefined for a word the enum lacks).
 * `only` keeps a subset (a wire field that takes some of an enum's values); a word of `only` that
 * the enum does not have is a start-up error, so a renamed value cannot be dropped silently.
 */
export function enumTable<W extends string>(desc: DescEnum, only?: readonly W[]) {
  const words: Record<number, W> = {};
  const values = new Map<string, number>();
  for (const v of desc.values) {
    const word = v.localName.toLowerCase() as W;
    if (v.number === 0 || (only && !only.includes(word))) continue;
    words[v.number] = word;
    values.set(word, v.number);
  }
  const missing = only?.filter((w) => !values.has(w)) ?? [];
  if (missing.length) throw new Error(`${desc.typeName} has no value ${missing.join(", ")}`);
  return {
    words,
    /** The word of a value; undefined for UNSPECIFIED, a value left out, or one the enum lacks. */
    word: (value: number): W | undefined => words[value],
    /** The value of a word; undefined for a word the table does not have (not even Object's keys). */
    value: (word: string | undefined): number | undefined =>
      word === undefined ? undefined : values.get(word),
  };
}
