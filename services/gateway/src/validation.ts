import { apiError, type FieldViolation } from "@hb/platform";
import type { z } from "zod";

type Where = "path" | "query" | "body";

/** Parses one part of the request; a failure is 400 BAD_REQUEST with a detail per field. */
export function parseInput<T extends z.ZodType>(schema: T, value: unknown, where: Where): z.output<T> {
  refuseUnsafeText(value, where);
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  const details: FieldViolation[] = flatten(result.error.issues).map((issue) => ({
    field: issue.path.length ? issue.path.map(String).join(".") : where,
    message: issue.message,
  }));
  throw invalid(where, details);
}

/** A body a route accepts must be a JSON object; an absent body stands for `{}`. */
export function bodyObject(body: unknown): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body === "object" && body !== null && !Array.isArray(body))
    return body as Record<string, unknown>;
  throw invalid("body", [{ field: "body", message: "must be a JSON object" }]);
}

function invalid(where: Where, details: FieldViolation[]) {
  const message =
    details.length === 1
      ? `Invalid ${where === "path" ? "identifier" : "input"}: ${details[0].field}: ${details[0].message}`
      : "Invalid input";
  return apiError("BAD_REQUEST", message, { violations: details });
}

/**
 * A union that matched no branch reports the issues of the branch the input was meant for (the
 * first whose own keys are all present and known; its errors are then about values) at their own
 * paths, so `details` names the real field (e.g. `items` for a 51-item order) instead of the
 * whole body. When no branch fits, the union's own message stands.
 */
function flatten(issues: readonly z.core.$ZodIssue[], prefix: PropertyKey[] = []): z.core.$ZodIssue[] {
  const out: z.core.$ZodIssue[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === "invalid_union") {
      const fitting = issue.errors.find((branch) => branch.length > 0 && !branch.some(isShapeMismatch));
      if (fitting) {
        out.push(...flatten(fitting, path));
        continue;
      }
    }
    out.push({ ...issue, path });
  }
  return out;
}

/** A value of another type altogether, a key the branch does not know, or a key it needs that is missing. */
const isShapeMismatch = (issue: z.core.$ZodIssue) =>
  (issue.code === "invalid_type" && issue.path.length === 0) ||
  (issue.code === "unrecognized_keys" && issue.path.length === 0) ||
  (issue.code === "invalid_type" && issue.path.length === 1 && issue.input === undefined);

/**
 * Refuses text PostgreSQL cannot store or would store altered: a NUL character (PostgreSQL text
 * cannot hold one) and lone UTF-16 surrogates (they cannot be encoded as UTF-8 and would be
 * replaced by U+FFFD on the way). Checked once for every string and key of the path, query and
 * body, iteratively (bodies are already limited in depth, but nothing here recurses).
 */
export function refuseUnsafeText(value: unknown, where: Where): void {
  const stack: Array<{ value: unknown; path: string[] }> = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === "string") {
      const problem = textProblem(v);
      if (problem) throw invalid(where, [{ field: path.length ? path.join(".") : where, message: problem }]);
    } else if (typeof v === "object" && v !== null) {
      for (const [k, child] of Object.entries(v)) {
        const problem = textProblem(k);
        if (problem) {
          throw invalid(where, [
            { field: path.length ? path.join(".") : where, message: `a key ${problem}` },
          ]);
        }
        stack.push({ value: child, path: [...path, k] });
      }
    }
  }
}

function textProblem(s: string): string | undefined {
  if (s.includes("\u0000")) return "must not contain a NUL character";
  if (!s.isWellFormed()) return "must not contain unpaired UTF-16 surrogates";
  return undefined;
}
