import type { RequestLogEntry } from "@hb/contracts/hb/auth/v1/api_keys_pb";
import { PAGE_SIZE } from "@hb/platform/paging";
import { paginate, when } from "./format.ts";
import { type Html, html } from "./html.ts";

export interface LogFilter {
  method: string;
  status: string;
  endpoint: string;
  page: string;
}

export const logFilterOf = (q: Record<string, unknown>): LogFilter => ({
  method: typeof q.method === "string" ? q.method : "",
  status: typeof q.status === "string" ? q.status : "",
  endpoint: typeof q.endpoint === "string" ? q.endpoint : "",
  page: typeof q.page === "string" ? q.page : "1",
});

/** status "2xx" matches a class, "404" an exact code. */
function matches(e: RequestLogEntry, f: LogFilter): boolean {
  if (f.method && e.method !== f.method.toUpperCase()) return false;
  if (f.endpoint && !e.endpoint.includes(f.endpoint)) return false;
  if (/^[1-5]xx$/i.test(f.status)) return Math.floor(e.statusCode / 100) === Number(f.status[0]);
  if (/^\d{3}$/.test(f.status)) return e.statusCode === Number(f.status);
  return true;
}

/** The filter form, the table and the pager of a request log (newest first). */
export function requestLogView(
  entries: RequestLogEntry[],
  f: LogFilter,
  action: string,
  o: { keyLabels?: Map<string, string>; duration?: boolean } = {},
): Html {
  const p = paginate(
    entries.filter((e) => matches(e, f)),
    f.page,
    PAGE_SIZE.staff,
  );
  const link = (n: number) =>
    `${action}?${new URLSearchParams({ method: f.method, status: f.status, endpoint: f.endpoint, page: String(n) })}`;
  return html`<form method="get" action="${action}" class="filters" aria-label="Filter the request log">
  <div class="field"><label for="log-method">Method</label>
  <select id="log-method" name="method">${["", "GET", "POST", "PUT", "PATCH", "DELETE"].map(
    (m) =>
      html`<option value="${m}"${f.method.toUpperCase() === m ? html` selected` : ""}>${m || "Any"}</option>`,
  )}</select></div>
  <div class="field"><label for="log-status">Status</label>
  <input id="log-status" name="status" value="${f.status}" placeholder="2xx, 404" size="6"></div>
  <div class="field"><label for="log-endpoint">Endpoint contains</label>
  <input id="log-endpoint" name="endpoint" value="${f.endpoint}"></div>
  <button type="submit">Filter</button>
</form>
<p>${p.total} ${p.total === 1 ? "request" : "requests"} in the last 30 days${p.pages > 1 ? `, page ${p.page} of ${p.pages}` : ""}.</p>
<div class="table-wrap" tabindex="0" role="region" aria-label="Request log">
<table>
<thead><tr><th scope="col">Time</th>${o.keyLabels ? html`<th scope="col">Key</th>` : ""}<th scope="col">Method</th><th scope="col">Endpoint</th><th scope="col">Status</th>${
    o.duration ? html`<th scope="col">Duration</th>` : ""
  }<th scope="col">Source</th></tr></thead>
<tbody>${
    p.rows.length
      ? p.rows.map(
          (e) =>
            html`<tr><td>${when(e.time)}</td>${o.keyLabels ? html`<td>${o.keyLabels.get(e.keyId) ?? e.keyId}</td>` : ""}<td>${e.method}</td><td class="mono">${e.endpoint}</td><td>${e.statusCode}</td>${
              o.duration ? html`<td>${e.durationMs} ms</td>` : ""
            }<td class="mono">${e.sourceIp}</td></tr>`,
        )
      : html`<tr><td colspan="7">No requests.</td></tr>`
  }</tbody>
</table>
</div>
${
  p.pages > 1
    ? html`<nav aria-label="Pages" class="pager">${p.page > 1 ? html`<a href="${link(p.page - 1)}">Newer</a>` : ""} ${
        p.page < p.pages ? html`<a href="${link(p.page + 1)}">Older</a>` : ""
      }</nav>`
    : ""
}`;
}
