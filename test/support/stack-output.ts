/** What a private stack's services say about themselves: their log lines and their metrics. */
import type { OwnStack } from "../own-stack.ts";

export interface LogLine {
  service: string;
  msg: string;
  level?: string;
  request_id?: string;
  trace_id?: string;
  raw: string;
}

/** Every JSON line each of `services` writes from now on (the stack's output must be piped). */
export function captureLogs<S extends string>(s: OwnStack, services: readonly S[]): Record<S, LogLine[]> {
  const lines = Object.fromEntries(services.map((n) => [n, [] as LogLine[]])) as Record<S, LogLine[]>;
  for (const name of services) {
    let partial = "";
    s.stack.procs.get(name)?.stdout?.on("data", (chunk: Buffer) => {
      const text = partial + chunk.toString();
      const parts = text.split("\n");
      partial = parts.pop() ?? "";
      for (const raw of parts) {
        if (!raw.startsWith("{")) continue;
        lines[name].push({ ...(JSON.parse(raw) as Omit<LogLine, "raw">), raw });
      }
    });
  }
  return lines;
}

/** A service's /metrics text (its port is in the stack's environment). */
export async function metricsText(s: OwnStack, service: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${s.stack.env[`${service.toUpperCase()}_METRICS_PORT`]}/metrics`);
  if (res.status !== 200) throw new Error(`${service} /metrics answered ${res.status}`);
  return res.text();
}

/** The value of one sample in Prometheus text format whose labels include `labels`. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries(
      [...(m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}
