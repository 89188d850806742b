import { type Logger, resolveError } from "@hb/platform";
import type { Response } from "express";
import { sendError } from "./envelope.ts";

/**
 * A backend's message names each field first ("url must be ...", joined with "; " when there are
 * several): the wire name replaces each renamed one.
 */
function renameFields(message: string, names: Record<string, string>): string {
  return message
    .split("; ")
    .map((part) => {
      const field = part.slice(0, part.indexOf(" "));
      return names[field] ? `${names[field]}${part.slice(field.length)}` : part;
    })
    .join("; ");
}

/**
 * Sends anything thrown while serving a request in the spec's envelope: a backend's refusal with
 * its code, message and field violations, anything unknown as INTERNAL_ERROR (logged here).
 * `fieldNames` renames a backend's fields (proto names) to the route's wire names.
 */
export function sendResolved(
  log: Logger,
  res: Response,
  err: unknown,
  where: string,
  fieldNames: Record<string, string> = {},
): void {
  const r = resolveError(err);
  if (r.status >= 500) log.error("request failed", { route: where, err });
  const wireName = (field: string) => fieldNames[field] ?? field;
  sendError(res, r.code, renameFields(r.message, fieldNames), {
    details: r.info?.violations.map((v) => ({
      field: wireName(v.field),
      message: renameFields(v.message, fieldNames),
    })),
    scope: r.info?.scope,
    retryAfterSeconds: r.info?.retryAfterSeconds || undefined,
  });
}
