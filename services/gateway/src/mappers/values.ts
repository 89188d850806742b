import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import type { Money } from "@hb/contracts/hb/platform/v1/money_pb";

/**
 * The spec's two ways of writing an amount, from billing's exact decimal: a 4-decimal string, or a
 * JSON number (parsed from the decimal text, never from arithmetic, so it is the nearest double).
 */
export function decimal4(m: Money | undefined): string {
  const [whole, fraction = ""] = (m?.amount || "0").split(".");
  return `${whole}.${fraction.padEnd(4, "0")}`;
}

export const amountNumber = (m: Money | undefined): number => Number(m?.amount || "0");

/** An instant the contract requires: ISO 8601 with milliseconds, as the spec writes times. */
export function isoTime(t: Timestamp | undefined): string {
  if (!t) throw new Error("a required timestamp is missing from the backend's answer");
  return timestampDate(t).toISOString();
}

/** An instant that may be absent: null on the wire. */
export const isoTimeOrNull = (t: Timestamp | undefined): string | null => (t ? isoTime(t) : null);

/**
 * The one translation between a contract enum and the spec's lowercase word. An enum value the
 * table lacks (UNSPECIFIED, or one added later) is a backend fault, not something to guess.
 */
export function wireEnum<E extends number, W extends string>(what: string, words: Record<W, E>) {
  const byValue = new Map<number, W>(Object.entries(words).map(([w, e]) => [e as number, w as W]));
  return {
    toWire(value: E): W {
      const word = byValue.get(value);
      if (word === undefined) throw new Error(`backend sent ${what} ${value}, which the API has no word for`);
      return word;
    },
    /** UNSPECIFIED (0) when the word is absent. */
    fromWire: (word: W | undefined): E => (word === undefined ? undefined : words[word]) ?? (0 as E),
  };
}
