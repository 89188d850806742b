import type { DescEnum } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import type { Money } from "@hb/contracts/hb/platform/v1/money_pb";
import { enumTable } from "@hb/platform/enum-words";
import { formatMoney, money } from "@hb/platform/money";

/** A field the contract always fills; its absence is a backend bug, not bad input. */
export function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`the backend sent no ${what}`);
  return value;
}

/** An exact amount as the spec's decimal strings write it: always 4 decimals ("12.5000"). */
export const decimal4 = (m: Money | undefined): string => formatMoney(money(required(m, "amount").amount));

/**
 * An amount as the spec's numeric fields write it. The decimal has at most 4 fractional digits,
 * so the number is the closest double to it and JSON prints exactly those digits back.
 */
export const amountNumber = (m: Money | undefined): number => Number(decimal4(m));

/** An instant in the spec's ISO 8601 form with milliseconds. */
export const iso = (t: Timestamp | undefined): string => timestampDate(required(t, "time")).toISOString();

/** An instant that may be absent, as the spec's null. */
export const isoOrNull = (t: Timestamp | undefined): string | null => (t ? iso(t) : null);

/** An optional contract value as the spec's null. */
export const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);

/**
 * The words of one contract enum on the wire, from its descriptor (platform `enumTable`): `words`
 * is the generated tuple of the wire's words (platform enum-words.gen.ts), or the subset of it a field
 * takes. UNSPECIFIED, a value left out, or an unknown number (a newer backend) has no word and
 * fails the answer loudly rather than putting a made-up string on the wire.
 */
export function enumWords<W extends string>(what: string, desc: DescEnum, words: readonly W[]) {
  const table = enumTable<W>(desc, words);
  return {
    words: table.words,
    wire(value: number): W {
      const w = table.word(value);
      if (w === undefined) throw new Error(`the backend sent no ${what} (${value})`);
      return w;
    },
    /** The enum value of a wire word (a query filter); undefined for a word the table lacks. */
    value: table.value,
  };
}
