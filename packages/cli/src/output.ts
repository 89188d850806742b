/** How results are printed: aligned columns for people, JSON for scripts. */
export type OutputFormat = "table" | "json";

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
}

const cell = (v: unknown): string => {
  if (v === null || v === undefined || v === "") return "-";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
};

/** Rows as left-aligned columns separated by two spaces, with a header line. */
function renderTable<T>(rows: T[], columns: Column<T>[]): string {
  const cells = [columns.map((c) => c.header), ...rows.map((r) => columns.map((c) => cell(c.value(r))))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i].length)));
  return cells
    .map((line) =>
      line
        .map((v, i) => (i === line.length - 1 ? v : v.padEnd(widths[i])))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** One record as "field  value" lines; nested objects as JSON. */
function renderRecord(record: Record<string, unknown>): string {
  const width = Math.max(0, ...Object.keys(record).map((k) => k.length));
  return Object.entries(record)
    .map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`)
    .join("\n");
}

export interface Printer {
  format: OutputFormat;
  /** A list: a table, or a JSON array. */
  list<T>(rows: T[], columns: Column<T>[]): void;
  /** One result: field lines, or JSON. */
  record(value: unknown): void;
  /** A human note on stderr (kept out of stdout, which a script may parse). */
  note(line: string): void;
}

export function printer(format: OutputFormat, out: (s: string) => void, err: (s: string) => void): Printer {
  return {
    format,
    list(rows, columns) {
      if (format === "json") out(`${JSON.stringify(rows, null, 2)}\n`);
      else out(rows.length ? `${renderTable(rows, columns)}\n` : "(none)\n");
    },
    record(value) {
      if (format === "json" || typeof value !== "object" || value === null) {
        out(`${JSON.stringify(value, null, 2)}\n`);
      } else out(`${renderRecord(value as Record<string, unknown>)}\n`);
    },
    note(line) {
      err(`${line}\n`);
    },
  };
}
