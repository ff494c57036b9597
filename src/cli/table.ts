import Table from "cli-table3";

/** A column of a {@link formatTable} table: its heading, and `right` for figures. */
export interface Column {
  readonly title: string;
  readonly right?: boolean;
}

// No borders: columns two spaces apart, so the output reads like `ps` and greps and cuts like it.
const PLAIN = {
  top: "",
  "top-mid": "",
  "top-left": "",
  "top-right": "",
  bottom: "",
  "bottom-mid": "",
  "bottom-left": "",
  "bottom-right": "",
  left: "",
  "left-mid": "",
  mid: "",
  "mid-mid": "",
  right: "",
  "right-mid": "",
  middle: "  ",
};

/**
 * Rows as an aligned text table with a heading line, for people. Cells are cut to their first
 * line so every row stays on one line; trailing spaces are dropped.
 */
export function formatTable(columns: readonly (Column | string)[], rows: readonly (readonly unknown[])[]): string {
  const specs = columns.map((column) => (typeof column === "string" ? { title: column } : column));
  const table = new Table({
    head: specs.map((column) => column.title),
    chars: PLAIN,
    style: { head: [], border: [], compact: true, "padding-left": 0, "padding-right": 0 },
    colAligns: specs.map((column) => (column.right ? "right" : "left")),
  });
  for (const row of rows) table.push(row.map(cellText));
  return table
    .toString()
    .split("\n")
    .map((line) => line.trimEnd())
    .filter((line) => line !== "")
    .join("\n");
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (value instanceof Date) return value.toISOString();
  const text = typeof value === "string" ? value : String(value);
  return text.split("\n", 1)[0]!;
}

/** JSON for scripts: dates as ISO-8601 strings, big integers as strings, two-space indent. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => (typeof item === "bigint" ? item.toString() : item), 2);
}
