/**
 * Draws latency against load as an SVG line chart from measured points (no hand drawing): one
 * line per series and percentile, linear scales, axes with round ticks. The load is closed-loop:
 * each point is a number of connections each sending its next request when the last is answered,
 * drawn at the throughput it achieved (autocannon's fixed-rate mode sends in bursts that put tens
 * of milliseconds of queueing on even a bare server, so it cannot draw this curve).
 */
export interface CurvePoint {
  connections: number;
  /** Requests per second achieved. */
  achieved: number;
  p50: number;
  p99: number;
}

export interface Series {
  name: string;
  color: string;
  points: CurvePoint[];
}

const W = 720;
const H = 420;
const M = { left: 64, right: 20, top: 40, bottom: 56 };

/** A round step giving about `n` ticks up to `max`. */
function tickStep(max: number, n: number): number {
  const raw = max / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");

export function latencySvg(title: string, series: Series[]): string {
  const all = series.flatMap((s) => s.points);
  const xMaxRaw = Math.max(...all.map((p) => p.achieved), 1);
  const yMaxRaw = Math.max(...all.map((p) => p.p99), 1);
  const xStep = tickStep(xMaxRaw, 6);
  const yStep = tickStep(yMaxRaw, 6);
  const xMax = Math.ceil(xMaxRaw / xStep) * xStep;
  const yMax = Math.ceil(yMaxRaw / yStep) * yStep;
  const x = (v: number) => M.left + ((W - M.left - M.right) * v) / xMax;
  const y = (v: number) => H - M.bottom - ((H - M.top - M.bottom) * v) / yMax;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12" role="img">`,
    // The plot's name for screen readers (and for the lint's accessibility rule).
    `<title>${esc(title)}</title>`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">${esc(title)}</text>`,
  ];
  for (let v = 0; v <= xMax; v += xStep) {
    out.push(`<line x1="${x(v)}" y1="${y(0)}" x2="${x(v)}" y2="${y(yMax)}" stroke="#eee"/>`);
    out.push(`<text x="${x(v)}" y="${y(0) + 16}" text-anchor="middle">${v.toLocaleString("en")}</text>`);
  }
  for (let v = 0; v <= yMax; v += yStep) {
    out.push(`<line x1="${x(0)}" y1="${y(v)}" x2="${x(xMax)}" y2="${y(v)}" stroke="#eee"/>`);
    out.push(`<text x="${x(0) - 6}" y="${y(v) + 4}" text-anchor="end">${v}</text>`);
  }
  out.push(`<line x1="${x(0)}" y1="${y(0)}" x2="${x(xMax)}" y2="${y(0)}" stroke="black"/>`);
  out.push(`<line x1="${x(0)}" y1="${y(0)}" x2="${x(0)}" y2="${y(yMax)}" stroke="black"/>`);
  out.push(
    `<text x="${W / 2}" y="${H - 14}" text-anchor="middle">throughput (requests/s) at 1, 2, 5, 10, 20, 50, 100 connections</text>`,
  );
  out.push(`<text transform="translate(16 ${H / 2}) rotate(-90)" text-anchor="middle">latency (ms)</text>`);
  let legendY = M.top + 6;
  for (const s of series) {
    for (const [pct, dash] of [
      ["p50", ""],
      ["p99", ' stroke-dasharray="6 4"'],
    ] as const) {
      const pts = s.points.map((p) => `${x(p.achieved).toFixed(1)},${y(p[pct]).toFixed(1)}`).join(" ");
      out.push(`<polyline points="${pts}" fill="none" stroke="${s.color}" stroke-width="2"${dash}/>`);
      for (const p of s.points) {
        out.push(
          `<circle cx="${x(p.achieved).toFixed(1)}" cy="${y(p[pct]).toFixed(1)}" r="2.5" fill="${s.color}"/>`,
        );
      }
      out.push(
        `<line x1="${M.left + 12}" y1="${legendY}" x2="${M.left + 40}" y2="${legendY}" stroke="${s.color}" stroke-width="2"${dash}/>`,
      );
      out.push(`<text x="${M.left + 46}" y="${legendY + 4}">${esc(`${s.name} ${pct}`)}</text>`);
      legendY += 16;
    }
  }
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
