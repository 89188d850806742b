import { apiError, type FieldViolation } from "@hb/platform";
import type { z } from "zod";

/** Parses one part of the request; a failure is 400 BAD_REQUEST with a detail per field. */
export function parseInput<T extends z.ZodType>(
  schema: T,
  value: unknown,
  where: "path" | "query" | "body",
): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const details: FieldViolation[] = result.error.issues.map((issue) => {
    const field = issue.path.length ? issue.path.map(String).join(".") : where;
    return { field, message: issue.message };
  });
  const message =
    details.length === 1
      ? `Invalid ${where === "path" ? "identifier" : "input"}: ${details[0].field}: ${details[0].message}`
      : "Invalid input";
  throw apiError("BAD_REQUEST", message, { violations: details });
}
