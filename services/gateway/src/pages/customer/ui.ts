import { type Html, html } from "../html.ts";
import { newToken } from "./once.ts";

/** The hidden fields every portal action form carries: the session's CSRF token and a one-time token. */
export const formTokens = (csrf: string) =>
  html`<input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="_once" value="${newToken()}">`;

/** A form of one button (power actions, pay, give up...). */
export function buttonForm(
  action: string,
  label: string,
  csrf: string,
  o: { danger?: boolean; fields?: Record<string, string>; aria?: string } = {},
): Html {
  return html`<form method="post" action="${action}" class="inline">${formTokens(csrf)}${Object.entries(
    o.fields ?? {},
  ).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}<button type="submit"${
    o.danger ? html` class="danger"` : ""
  }${o.aria ? html` aria-label="${nameWithLabel(label, o.aria)}"` : ""}>${label}</button></form>`;
}

/**
 * A button's accessible name must contain its visible words (WCAG 2.5.3, "label in name"): a
 * person using speech input says what they see. A fuller name that leaves them out ("Upgrade to
 * XL" on "Request this upgrade") keeps the visible words first.
 */
const nameWithLabel = (label: string, aria: string) =>
  aria.toLowerCase().includes(label.toLowerCase()) ? aria : `${label} (${aria})`;

/** What a column without a heading (its rows' buttons and links) is called for screen readers. */
const UNNAMED_COLUMN = "Actions";

/**
 * A table with a caption for screen readers; `empty` is said instead when there are no rows. Below
 * 600 px it reads as one card per row (pages.css), each cell labelled with its heading (pages.js).
 */
export function table(caption: string, head: string[], rows: (Html | string)[][], empty: string): Html {
  if (!rows.length) return html`<p class="empty">${empty}</p>`;
  return html`<div class="table-wrap" role="region" aria-label="${caption}" tabindex="0"><table>
<caption class="sr">${caption}</caption>
<thead><tr>${head.map((h) => html`<th scope="col">${h || html`<span class="sr">${UNNAMED_COLUMN}</span>`}</th>`)}</tr></thead>
<tbody>${rows.map((r) => html`<tr>${r.map((c) => html`<td>${c}</td>`)}</tr>`)}</tbody>
</table></div>`;
}

/** A definition list of label/value pairs (a record's facts). */
export function facts(pairs: [string, Html | string | number | null | undefined][]): Html {
  return html`<dl class="facts">${pairs
    .filter(([, v]) => v !== undefined && v !== null && v !== "")
    .map(([k, v]) => html`<dt>${k}</dt><dd>${v as Html | string}</dd>`)}</dl>`;
}

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  total_pages?: number;
  pages?: number;
}

/** Previous/next links of a list page, keeping the list's other query parameters. */
export function pager(
  base: string,
  p: Pagination | undefined,
  query: Record<string, string> = {},
): Html | string {
  if (!p) return "";
  const pages = Math.max(1, p.total_pages ?? p.pages ?? Math.ceil(p.total / Math.max(1, p.limit)));
  if (pages <= 1) return "";
  const href = (n: number) => {
    const q = new URLSearchParams({ ...query, page: String(n) });
    return `${base}?${q}`;
  };
  return html`<nav class="pager" aria-label="Pages">
${p.page > 1 ? html`<a href="${href(p.page - 1)}" rel="prev">Previous page</a>` : ""}
<span>Page ${p.page} of ${pages}</span>
${p.page < pages ? html`<a href="${href(p.page + 1)}" rel="next">Next page</a>` : ""}
</nav>`;
}

/** Money on pages has one home (format.ts); re-exported for the pages that take it from here. */
export { money } from "../format.ts";

/** An ISO time as "2026-11-23 15:40 UTC". */
export const at = (iso: string | null | undefined) =>
  iso ? `${iso.slice(0, 16).replace("T", " ")} UTC` : "—";

/** A status word as a badge (the word itself is the text; colour is only a hint). */
export const badge = (status: string) =>
  html`<span class="badge badge-${status}">${status.replaceAll("_", " ")}</span>`;

/** The page number of a list request (1 when absent or not a number). */
export const pageParam = (q: unknown) => Math.max(1, Number.parseInt(String(q ?? "1"), 10) || 1);
