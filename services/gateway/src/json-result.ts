/** Backends that answer in the spec's wire shape send it as a JSON document; this reads it back. */
export function fromJson(result: { json: string } | undefined): Record<string, unknown> {
  return result ? (JSON.parse(result.json) as Record<string, unknown>) : {};
}

/** Lists whose pagination the spec puts beside `data` (VPS and dedicated lists). */
export function splitPagination(value: Record<string, unknown>) {
  const { pagination, ...rest } = value;
  return { data: rest, pagination };
}
