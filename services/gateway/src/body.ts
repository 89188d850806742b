import { apiError, type ErrorCode } from "@hb/platform";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";

/** Deepest nesting of objects and arrays a request body may have. */
const MAX_BODY_DEPTH = 32;

export type RawBodyRequest = Request & { rawBody?: Buffer };

/** holder object → key → the exact source text of the JSON number stored under that key. */
const numberSources = new WeakMap<object, Map<string, string>>();

/**
 * The exact text a JSON number was written with in the request body (e.g. "0.07", "1e-2"), so
 * money is read from what the client wrote and never through a binary float. Undefined when the
 * value did not come from a parsed body number.
 */
export function numberSource(holder: unknown, key: string): string | undefined {
  if (typeof holder !== "object" || holder === null) return undefined;
  return numberSources.get(holder)?.get(key);
}

/**
 * Depth of the deepest nesting of `{`/`[` outside strings, counted in one pass without recursion,
 * so a hostile body is refused before anything (JSON.parse's reviver, zod) walks it recursively.
 */
export function exceedsDepth(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

function revive(this: unknown, key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value === "number" && context?.source !== undefined && typeof this === "object" && this) {
    let sources = numberSources.get(this);
    if (!sources) {
      sources = new Map();
      numberSources.set(this, sources);
    }
    sources.set(key, context.source);
  }
  return value;
}

/** Parses a request body's text; throws BAD_REQUEST for text that is not acceptable JSON. */
export function parseJsonBody(text: string): unknown {
  if (exceedsDepth(text, MAX_BODY_DEPTH)) {
    throw apiError("BAD_REQUEST", `Request body is nested more than ${MAX_BODY_DEPTH} levels deep`);
  }
  try {
    return JSON.parse(text, revive as (key: string, value: unknown) => unknown);
  } catch {
    throw apiError("BAD_REQUEST", "Request body is not valid JSON");
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * Reads any body as JSON whatever its content type (so `curl -d '{...}'` works as written), up to
 * `limit`. The raw bytes are kept for reseller request signatures, which cover the exact body.
 * `req.body` is undefined when the request has no body, else the parsed JSON value (any type:
 * the route's validation decides what it accepts).
 */
export function jsonBody(limit: string): RequestHandler[] {
  const raw = express.raw({ limit, type: () => true });
  return [
    raw,
    (req: Request, _res: Response, next: NextFunction) => {
      const buf: unknown = req.body;
      req.body = undefined;
      if (!Buffer.isBuffer(buf) || buf.length === 0) return next();
      (req as RawBodyRequest).rawBody = buf;
      const charset = /;\s*charset=("?)([^";\s]+)\1/i.exec(req.get("content-type") ?? "")?.[2];
      if (charset && !/^utf-?8$/i.test(charset)) {
        return next(apiError("UNSUPPORTED_MEDIA_TYPE", "Unsupported body encoding; send UTF-8 JSON"));
      }
      let text: string;
      try {
        text = utf8.decode(buf);
      } catch {
        return next(apiError("BAD_REQUEST", "Request body is not valid UTF-8"));
      }
      try {
        req.body = parseJsonBody(text);
      } catch (err) {
        return next(err);
      }
      next();
    },
  ];
}

/**
 * A body parser's own failure (express.raw's, express.urlencoded's) in the spec's terms, for the
 * API's envelope and the pages alike; undefined when `err` is not one.
 */
export function parserRefusal(
  err: { type?: string; status?: number },
  limit: string,
): { code: ErrorCode; message: string } | undefined {
  if (err.type === "entity.too.large")
    return { code: "PAYLOAD_TOO_LARGE", message: `Request body exceeds ${limit}` };
  if (err.type === "parameters.too.many")
    return { code: "PAYLOAD_TOO_LARGE", message: "Request body has too many fields" };
  if (err.type === "encoding.unsupported" || err.type === "charset.unsupported") {
    return { code: "UNSUPPORTED_MEDIA_TYPE", message: "Unsupported body encoding; send UTF-8" };
  }
  if (err.type !== undefined && err.status !== undefined && err.status >= 400 && err.status < 500) {
    return { code: "BAD_REQUEST", message: "Malformed request" };
  }
  return undefined;
}
