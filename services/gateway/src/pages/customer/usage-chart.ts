import type { z } from "zod";
import { type machineStats, USAGE_RANGES, type usageHistory } from "../../wire/machine.ts";
import { type Html, html } from "../html.ts";
import type { Operation, PageApi } from "./api.ts";
import { Refused } from "./api.ts";
import { table } from "./ui.ts";

type History = z.infer<typeof usageHistory>;
type Point = History["points"][number];
type Range = (typeof USAGE_RANGES)[number];

/** The range a service page shows when the address names none: a day, as cloud panels open on. */
const DEFAULT_RANGE: Range = "24h";
const RANGE_WORDS: Record<Range, string> = {
  "1h": "last hour",
  "24h": "last 24 hours",
  "7d": "last 7 days",
  "30d": "last 30 days",
};

/** A series of one chart: its name, its unit's figure of a point (undefined: no reading), its line. */
interface Series {
  name: string;
  value: (p: Point) => number | undefined;
  /** SVG stroke-dasharray, so two lines differ by more than colour. */
  dash?: string;
}
interface Chart {
  id: string;
  title: string;
  unit: string;
  /** The top of the scale: the machine's size where it has one, else the largest figure. */
  max: (points: Point[]) => number;
  series: Series[];
}

const GB = 1024;
const mbit = (bytesPerSecond: number | null) =>
  bytesPerSecond === null ? undefined : (bytesPerSecond * 8) / 1_000_000;
const largest = (points: Point[], series: Series[]) =>
  Math.max(0, ...points.flatMap((p) => series.map((s) => s.value(p) ?? 0)));
/** 1, 2 or 5 times a power of ten at or above x: a scale a person reads at a glance. */
function niceCeil(x: number): number {
  if (x <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(x));
  return [1, 2, 5, 10].map((m) => m * p).find((v) => v >= x) ?? 10 * p;
}

const NETWORK: Series[] = [
  { name: "In", value: (p) => mbit(p.network_rx_bytes_per_second) },
  { name: "Out", value: (p) => mbit(p.network_tx_bytes_per_second), dash: "6 4" },
];
const CHARTS: Chart[] = [
  {
    id: "cpu",
    title: "Processor",
    unit: "%",
    max: () => 100,
    series: [{ name: "Used", value: (p) => p.cpu_percent }],
  },
  {
    id: "memory",
    title: "Memory",
    unit: "GB",
    max: (ps) => Math.max(...ps.map((p) => p.memory_total_mb / GB), 0) || 1,
    series: [{ name: "Used", value: (p) => p.memory_used_mb / GB }],
  },
  {
    id: "disk",
    title: "Disk",
    unit: "GB",
    max: (ps) => Math.max(...ps.map((p) => p.disk_total_gb), 0) || 1,
    series: [{ name: "Used", value: (p) => p.disk_used_gb }],
  },
  {
    id: "network",
    title: "Network",
    unit: "Mbit/s",
    max: (ps) => niceCeil(largest(ps, NETWORK)),
    series: NETWORK,
  },
];

/** A figure in its unit, to a precision that means something at its size. */
export function figure(v: number, unit: string): string {
  const digits = v >= 100 ? 0 : v >= 10 ? 1 : 2;
  return `${v.toFixed(digits)} ${unit === "%" ? "%" : unit}`.replace(" %", "%");
}

/** A point's time as the range needs it: clock time within the hour, date and time beyond. */
const stamp = (iso: string, range: Range) =>
  range === "1h" ? `${iso.slice(11, 16)} UTC` : `${iso.slice(5, 10)} ${iso.slice(11, 16)} UTC`;

const W = 600;
const H = 160;
const PAD = { left: 84, right: 12, top: 12, bottom: 28 };
/** A scale's label: no trailing zeros (0%, 0.5 GB, 200 Mbit/s), so it fits beside the chart. */
const axisFigure = (v: number, unit: string) => `${+v.toFixed(2)}${unit === "%" ? "%" : ` ${unit}`}`;

/** The line of one series, broken where a step had no reading (a gap is not drawn as a slope). */
function paths(points: Point[], s: Series, h: History, max: number): string[] {
  const from = Date.parse(h.from);
  const span = Math.max(1, Date.parse(h.to) - from);
  // A step's point sits at its middle, kept inside the chart (the current step's middle may be ahead of now).
  const x = (p: Point) =>
    PAD.left +
    Math.min(1, Math.max(0, (Date.parse(p.at) + (h.step_seconds * 1000) / 2 - from) / span)) *
      (W - PAD.left - PAD.right);
  const y = (v: number) => PAD.top + (1 - Math.min(v, max) / max) * (H - PAD.top - PAD.bottom);
  const lines: string[] = [];
  let current: string[] = [];
  let lastAt = Number.NEGATIVE_INFINITY;
  for (const p of points) {
    const v = s.value(p);
    const at = Date.parse(p.at);
    if (v === undefined || at - lastAt > h.step_seconds * 1000) {
      if (current.length) lines.push(current.join(" "));
      current = [];
    }
    if (v !== undefined) current.push(`${x(p).toFixed(1)},${y(v).toFixed(1)}`);
    lastAt = v === undefined ? Number.NEGATIVE_INFINITY : at;
  }
  if (current.length) lines.push(current.join(" "));
  return lines;
}

/** What the chart shows, said in words for a screen reader (the SVG's <desc>). */
function summary(points: Point[], c: Chart, range: Range): string {
  return c.series
    .map((s) => {
      const vs = points.flatMap((p) => {
        const v = s.value(p);
        return v === undefined ? [] : [{ v, at: p.at }];
      });
      if (!vs.length) return `${s.name}: no readings.`;
      const peak = vs.reduce((a, b) => (b.v > a.v ? b : a));
      const mean = vs.reduce((a, b) => a + b.v, 0) / vs.length;
      const last = vs[vs.length - 1] as { v: number };
      return `${s.name}: average ${figure(mean, c.unit)}, peak ${figure(peak.v, c.unit)} at ${stamp(peak.at, range)}, latest ${figure(last.v, c.unit)}.`;
    })
    .join(" ");
}

/** One metric as an accessible SVG line chart, with its figures as a table for those who want them. */
function chart(h: History, c: Chart): Html {
  const range = h.range;
  const max = c.max(h.points);
  const title = `${c.title} (${c.unit}), ${RANGE_WORDS[range]}`;
  const tid = `usage-${c.id}-title`;
  const did = `usage-${c.id}-desc`;
  const grid = [0, 0.5, 1].map((f) => {
    const y = PAD.top + (1 - f) * (H - PAD.top - PAD.bottom);
    return html`<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y}" y2="${y}" stroke="currentColor" stroke-opacity="0.2"/><text x="${PAD.left - 6}" y="${y + 4}" text-anchor="end" font-size="11" fill="currentColor">${axisFigure(max * f, c.unit)}</text>`;
  });
  const lines = c.series.map((s) =>
    paths(h.points, s, h, max).map((pts) => {
      // A reading with none beside it is a dot: a line of one point draws nothing.
      if (!pts.includes(" ")) {
        const [cx, cy] = pts.split(",");
        // A dashed series' dots are hollow, so two series differ by more than colour here too.
        return s.dash
          ? html`<circle cx="${cx}" cy="${cy}" r="3" fill="none" stroke="currentColor" stroke-width="1.5"/>`
          : html`<circle cx="${cx}" cy="${cy}" r="3" fill="currentColor"/>`;
      }
      return html`<polyline points="${pts}" fill="none" stroke="currentColor" stroke-width="2"${s.dash ? html` stroke-dasharray="${s.dash}"` : ""}/>`;
    }),
  );
  const legend =
    c.series.length > 1
      ? c.series.map(
          (s, i) =>
            html`<line x1="${W - 150 + i * 70}" x2="${W - 128 + i * 70}" y1="${H - 8}" y2="${H - 8}" stroke="currentColor" stroke-width="2"${s.dash ? html` stroke-dasharray="${s.dash}"` : ""}/><text x="${W - 124 + i * 70}" y="${H - 4}" font-size="11" fill="currentColor">${s.name}</text>`,
        )
      : "";
  return html`<figure class="usage-chart">
<svg role="img" aria-labelledby="${tid}" aria-describedby="${did}" viewBox="0 0 ${W} ${H}" width="100%" preserveAspectRatio="xMidYMid meet" xmlns="http://www.w3.org/2000/svg">
<title id="${tid}">${title}</title>
<desc id="${did}">${summary(h.points, c, range)}</desc>
${grid}
<text x="${PAD.left}" y="${H - 4}" font-size="11" fill="currentColor">${stamp(h.from, range)}</text>
<text x="${W - PAD.right - (legend ? 160 : 0)}" y="${H - 4}" text-anchor="end" font-size="11" fill="currentColor">${stamp(h.to, range)}</text>
${lines}
${legend}
</svg>
<details><summary>${c.title}: the figures as a table</summary>
${table(
  title,
  ["Time", ...c.series.map((s) => `${s.name} (${c.unit})`)],
  h.points.map((p) => [
    stamp(p.at, range),
    ...c.series.map((s) => {
      const v = s.value(p);
      return v === undefined ? "no reading" : figure(v, c.unit);
    }),
  ]),
  "No readings in this range.",
)}
</details>
</figure>`;
}

/** The four charts of a machine's usage history, or why there are none. */
function usageCharts(h: History): Html {
  if (!h.points.length) {
    return html`<p class="empty">No readings in the ${RANGE_WORDS[h.range]} yet: compute records each machine's usage every minute while it exists.</p>`;
  }
  return html`${CHARTS.map((c) => html`<h3>${c.title}</h3>${chart(h, c)}`)}`;
}

const rangeOf = (q: unknown): Range =>
  typeof q === "string" && (USAGE_RANGES as readonly string[]).includes(q) ? (q as Range) : DEFAULT_RANGE;

/**
 * The service page's usage history section: the range links and the charts, from the machine's
 * stats operation with ?range= (the same answer the API gives). A refusal is said, not thrown:
 * the rest of the page stands without it.
 */
export async function usageSection(
  api: PageApi,
  op: Operation,
  id: string,
  rangeParam: unknown,
): Promise<Html> {
  const range = rangeOf(rangeParam);
  const nav = html`<nav aria-label="Usage history range"><ul class="ranges">${USAGE_RANGES.map(
    (r) =>
      html`<li><a href="/portal/services/${id}?range=${r}#usage-history"${r === range ? html` aria-current="page"` : ""}>${RANGE_WORDS[r]}</a></li>`,
  )}</ul></nav>`;
  let body: Html;
  try {
    const h = (await api<z.infer<typeof machineStats>>(op, { params: { id }, query: { range } })).data
      .history;
    body = h ? usageCharts(h) : html`<p class="empty">No usage history for this machine.</p>`;
  } catch (err) {
    if (!(err instanceof Refused)) throw err;
    body = html`<p class="empty">${err.message}</p>`;
  }
  return html`<section id="usage-history" aria-labelledby="usage-history-h"><h2 id="usage-history-h">Usage history</h2>${nav}${body}</section>`;
}
