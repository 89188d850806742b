/**
 * The machine-list pages this gateway wrote, each with the version of its customer's pages it
 * was read at (issue 31 §1). The list asks compute whether its version still stands; while it
 * does, compute sends no records and the page is answered from here, with no rows read, sent or
 * written to JSON again. Nothing here is trusted without that answer: a held page is only ever
 * served after compute has said, in this request, that it is the page.
 *
 * Bounded by the characters of the pages' JSON held, the least recently read page going first.
 * Each is held as its text and its envelope's bytes: about two bytes a character.
 */
import type { JsonText } from "./envelope.ts";

export interface HeldPage {
  version: string;
  /** The page's `data`, as JSON text (and, once answered, its envelope's bytes). */
  data: JsonText;
  total: number;
}

/** The version of a customer whose pages never changed since versions were kept: nothing to compare with. */
export const NEVER_CHANGED = "0";

export class HeldPages {
  readonly #pages = new Map<string, HeldPage>();
  #chars = 0;
  readonly maxChars: number;

  constructor(maxChars: number) {
    this.maxChars = maxChars;
  }

  static key(customerId: string, kind: string, page: number, limit: number): string {
    return `${customerId} ${kind} ${page} ${limit}`;
  }

  get(key: string): HeldPage | undefined {
    const held = this.#pages.get(key);
    if (held) {
      // Map keeps insertion order: the oldest key is the least recently read.
      this.#pages.delete(key);
      this.#pages.set(key, held);
    }
    return held;
  }

  set(key: string, page: HeldPage): void {
    this.delete(key);
    if (page.data.text.length > this.maxChars) return;
    this.#pages.set(key, page);
    this.#chars += page.data.text.length;
    for (const [oldest, p] of this.#pages) {
      if (this.#chars <= this.maxChars) break;
      this.#pages.delete(oldest);
      this.#chars -= p.data.text.length;
    }
  }

  delete(key: string): void {
    const held = this.#pages.get(key);
    if (!held) return;
    this.#pages.delete(key);
    this.#chars -= held.data.text.length;
  }

  /** Characters held, for the tests of the bound. */
  get chars(): number {
    return this.#chars;
  }

  get size(): number {
    return this.#pages.size;
  }
}
