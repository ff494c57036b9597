/**
 * Migrations describe tables as data; each database renders them into its own DDL. This keeps one
 * description of the schema while letting each database use its own types, index syntax and
 * table options.
 */
export type ColumnKind = "id" | "reference" | "integer" | "string" | "text" | "longText" | "timestamp" | "boolean";

/** One column of a table, described once and rendered per database. */
export interface ColumnSpec {
  readonly kind: ColumnKind;
  readonly notNull?: boolean;
  /** A literal SQL default, already valid on every database (`0`, `1`). */
  readonly default?: string;
  /** Length for `string` columns; 255 when omitted. */
  readonly length?: number;
}

/** An index: its name, columns and whether it is unique. */
export interface IndexSpec {
  readonly name: string;
  readonly columns: readonly string[];
  readonly unique?: boolean;
}

/** A reference to another table's id, with what happens when that row is deleted. */
export interface ForeignKeySpec {
  readonly column: string;
  readonly references: string;
  readonly onDeleteCascade: boolean;
}

/** A table as data: columns, indexes and foreign keys, rendered to DDL by each database's adapter. */
export interface TableSpec {
  readonly name: string;
  readonly columns: Readonly<Record<string, ColumnSpec>>;
  readonly indexes: readonly IndexSpec[];
  readonly foreignKeys?: readonly ForeignKeySpec[];
}

/**
 * A migration step: a table to create, or a raw statement per database. A database missing from
 * `sql` has nothing to do in that step (a PostgreSQL-only trigger, say).
 */
export type MigrationStep =
  | { readonly createTable: TableSpec }
  | { readonly sql: Readonly<Partial<Record<"sqlite" | "postgres" | "mysql", string>>> };

/** One numbered, append-only migration: what it creates or changes, rendered per database. */
export interface Migration {
  /** Sortable and unique, e.g. `"001_create_tables"`. Never renamed once released. */
  readonly version: string;
  readonly steps: readonly MigrationStep[];
}

/** Renders a {@link TableSpec} for one database. */
export interface DdlRenderer {
  createTable(table: TableSpec): string[];
}

/** Quote an identifier: some column names (`key`) are reserved words in MySQL. */
export type QuoteIdentifier = (name: string) => string;

/** Quote an identifier the SQL-standard way (SQLite, PostgreSQL). */
export const doubleQuote: QuoteIdentifier = (name) => `"${name}"`;

/** Shared rendering of a column list; `typeOf` supplies the database's type names. */
export function renderColumns(
  table: TableSpec,
  typeOf: (column: ColumnSpec) => string,
  quote: QuoteIdentifier,
): string[] {
  const lines = Object.entries(table.columns).map(([name, column]) => {
    let line = `${quote(name)} ${typeOf(column)}`;
    if (column.kind !== "id" && column.notNull) line += " NOT NULL";
    if (column.default !== undefined) line += ` DEFAULT ${column.default}`;
    return line;
  });
  for (const fk of table.foreignKeys ?? []) {
    lines.push(
      `FOREIGN KEY (${quote(fk.column)}) REFERENCES ${fk.references}${fk.onDeleteCascade ? " ON DELETE CASCADE" : ""}`,
    );
  }
  return lines;
}

/** `CREATE [UNIQUE] INDEX` statements, for databases that take indexes outside `CREATE TABLE`. */
export function renderSeparateIndexes(table: TableSpec, quote: QuoteIdentifier): string[] {
  return table.indexes.map(
    (index) =>
      `CREATE ${index.unique ? "UNIQUE " : ""}INDEX IF NOT EXISTS ${index.name} ON ${table.name} (${index.columns.map(quote).join(", ")})`,
  );
}
