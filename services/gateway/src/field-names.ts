import { apiError, resolveError } from "@hb/platform";

/**
 * A backend names the fields of its own request in a refusal's violations (image_id,
 * public_key); the customer sees them as the route's body names them. Renames the fields in
 * `names` and passes every other error through unchanged.
 */
export async function asBodyFields<T>(call: Promise<T>, names: Record<string, string>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    const r = resolveError(err);
    const violations = r.info?.violations ?? [];
    if (!violations.some((v) => Object.hasOwn(names, v.field))) throw err;
    throw apiError(r.code, r.message, {
      violations: violations.map((v) => ({ field: names[v.field] ?? v.field, message: v.message })),
    });
  }
}
