/**
 * The wire's enum words come from the contract (platform enum-words.gen.ts, generated from the
 * protobuf descriptors by `npm run gen`); a field that takes only some of an enum's values says which it
 * leaves out here, so a new value in proto/ reaches every other field without an edit.
 */
export * from "@hb/platform/enum-words.gen";

/** A generated word tuple without some of its words, still a tuple `z.enum` takes. */
export function without<const T extends readonly [string, ...string[]], X extends T[number]>(
  words: T,
  ...left: X[]
): [Exclude<T[number], X>, ...Exclude<T[number], X>[]] {
  const kept = words.filter((w) => !(left as readonly string[]).includes(w));
  if (kept.length === 0) throw new Error("a wire enum needs at least one word");
  return kept as [Exclude<T[number], X>, ...Exclude<T[number], X>[]];
}
