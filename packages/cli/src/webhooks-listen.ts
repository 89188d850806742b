/**
 * `hb webhooks listen --forward-to <url>`: streams the partner's webhook events from
 * GET /reseller/webhooks/stream (a signed reseller request) and POSTs each to a local receiver
 * with the exact body and signed headers of the real delivery, so a receiver is built and tested
 * without a public URL. Reconnects with back-off until the signal aborts.
 */
import { signResellerRequest } from "@hb/webhook-signature";

export interface WebhooksListenOptions {
  /** The API base, e.g. http://localhost:8080/api/v1 */
  apiUrl: string;
  /** A reseller key (account scope). */
  apiKey: string;
  signingSecret: string;
  forwardTo: string;
  signal?: AbortSignal;
  log: (line: string) => void;
}

/** A delivery as the stream carries it (`event: delivery`). */
interface StreamedDelivery {
  id: string;
  event: string;
  headers: Record<string, string>;
  body: string;
}

interface SseEvent {
  event: string;
  data: string;
}

/** Back-off between connection attempts: 1 s, doubling, at most 30 s; reset once a stream opens. */
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;
/** The platform's answer deadline for deliveries, kept for forwarded ones. */
const FORWARD_TIMEOUT_MS = 30_000;

/** Refusals that reconnecting cannot cure: a wrong key, secret or scope. */
class Refused extends Error {}

export async function webhooksListen(opts: WebhooksListenOptions): Promise<void> {
  const streamUrl = `${opts.apiUrl.replace(/\/+$/, "")}/reseller/webhooks/stream`;
  let retryMs = FIRST_RETRY_MS;
  while (!opts.signal?.aborted) {
    try {
      const opened = await listenOnce(streamUrl, opts);
      if (opened) retryMs = FIRST_RETRY_MS;
    } catch (err) {
      if (opts.signal?.aborted) break;
      if (err instanceof Refused) throw err;
      opts.log(`Stream failed: ${messageOf(err)}`);
    }
    if (opts.signal?.aborted) break;
    opts.log(`Reconnecting in ${Math.round(retryMs / 1000)} s`);
    await sleep(retryMs, opts.signal);
    retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
  }
}

/** One connection: true when the stream opened (then back-off starts again from the beginning). */
async function listenOnce(streamUrl: string, opts: WebhooksListenOptions): Promise<boolean> {
  // A connection that stops hearing anything (not even heartbeats) is dropped and made again.
  const connection = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, connection.signal]) : connection.signal;
  let silenceMs = 60_000;
  let watchdog = setTimeout(() => connection.abort(), silenceMs);
  const heard = () => {
    clearTimeout(watchdog);
    watchdog = setTimeout(() => connection.abort(), silenceMs);
  };
  let opened = false;
  try {
    const res = await fetch(streamUrl, {
      headers: {
        authorization: `Bearer ${opts.apiKey}`,
        accept: "text/event-stream",
        ...signResellerRequest({ secret: opts.signingSecret }),
      },
      signal,
    });
    if (!res.ok || !res.body) {
      const refusal = describeRefusal(res.status, await res.text().catch(() => ""));
      if (res.status === 401 || res.status === 403 || res.status === 404) throw new Refused(refusal);
      opts.log(`Stream refused: ${refusal}`);
      return false;
    }
    for await (const ev of readSse(res.body, heard)) {
      if (ev.event === "ready") {
        opened = true;
        const ready = JSON.parse(ev.data) as { heartbeatSeconds?: number };
        silenceMs = Math.max(3 * (ready.heartbeatSeconds ?? 15) * 1000, 5000);
        heard();
        opts.log(`Ready: forwarding webhook events to ${opts.forwardTo} (Ctrl-C to stop)`);
      } else if (ev.event === "delivery") {
        opts.log(await forward(JSON.parse(ev.data) as StreamedDelivery, opts));
      } else if (ev.event === "error") {
        const e = JSON.parse(ev.data) as { code?: string; error?: string };
        opts.log(`Stream ended by the platform: ${e.code ?? ""} ${e.error ?? ""}`.trim());
      }
    }
    if (connection.signal.aborted && !opts.signal?.aborted) opts.log("Stream went silent");
    return opened;
  } catch (err) {
    if (connection.signal.aborted && !opts.signal?.aborted) {
      opts.log("Stream went silent");
      return opened;
    }
    throw err;
  } finally {
    clearTimeout(watchdog);
    connection.abort();
  }
}

/** POSTs the delivery as it is; one log line with the receiver's answer. */
async function forward(d: StreamedDelivery, opts: WebhooksListenOptions): Promise<string> {
  const line = `${new Date().toISOString()} ${d.event} ${d.id} -> POST ${opts.forwardTo}`;
  const timeout = AbortSignal.timeout(FORWARD_TIMEOUT_MS);
  try {
    const res = await fetch(opts.forwardTo, {
      method: "POST",
      headers: d.headers,
      body: d.body,
      // As the platform does: a redirect is an answer, never followed.
      redirect: "manual",
      signal: opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout,
    });
    await res.body?.cancel();
    return `${line} [${res.status}]`;
  } catch (err) {
    return `${line} [failed: ${timeout.aborted ? `no answer within ${FORWARD_TIMEOUT_MS / 1000} s` : messageOf(err)}]`;
  }
}

/** Server-sent events from a response body; `heard` is called on every chunk (heartbeats too). */
async function* readSse(body: ReadableStream<Uint8Array>, heard: () => void): AsyncGenerator<SseEvent> {
  let buffer = "";
  let event = "";
  let data: string[] = [];
  for await (const chunk of body.pipeThrough(new TextDecoderStream())) {
    heard();
    buffer += chunk;
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, "");
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf("\n");
      if (line === "") {
        if (data.length) yield { event: event || "message", data: data.join("\n") };
        event = "";
        data = [];
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
  }
}

function describeRefusal(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as { code?: string; error?: string };
    if (body.code) return `HTTP ${status} ${body.code}: ${body.error ?? ""}`.trim();
  } catch {
    // not the API's envelope: a proxy's page, say
  }
  return `HTTP ${status}`;
}

function messageOf(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}
