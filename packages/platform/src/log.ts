import { currentContext } from "./request-context.ts";

type Level = "debug" | "info" | "warn" | "error";
const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

// Anything that looks like an API key or a signing secret is masked before it is written, so a
// careless log line cannot leak one.
const keyPattern = /\b([a-z]{2,8})_([A-Za-z0-9]{8})_[A-Za-z0-9]{20,}/g;
const signingSecretPattern = /\bwhsec_[A-Za-z0-9_-]{20,}/g;
export function redact(text: string): string {
  return text.replace(keyPattern, "$1_$2_[redacted]").replace(signingSecretPattern, "whsec_[redacted]");
}

function serialise(value: unknown): unknown {
  if (value instanceof Error) {
    return { name: value.name, message: redact(value.message), stack: value.stack && redact(value.stack) };
  }
  return value;
}

/** One JSON object per line on stdout. */
export function createLogger(service: string, level: string = process.env.LOG_LEVEL ?? "info"): Logger {
  const min = order[level as Level] ?? order.info;
  const write = (lvl: Level, msg: string, fields?: Record<string, unknown>) => {
    if (order[lvl] < min) return;
    const entry: Record<string, unknown> = {
      time: new Date().toISOString(),
      level: lvl,
      service,
      msg: redact(msg),
    };
    // Inside a request (HTTP, RPC, event, delivery) every line names it and its trace.
    const ctx = currentContext();
    if (ctx) {
      entry.request_id = ctx.requestId;
      entry.trace_id = ctx.traceId;
    }
    if (fields) for (const [k, v] of Object.entries(fields)) entry[k] = serialise(v);
    process.stdout.write(`${redact(JSON.stringify(entry))}\n`);
  };
  return {
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
  };
}
