/**
 * The part of a SQLite connection firm-queue uses, whichever driver opened it: better-sqlite3's
 * `Database` has this shape as it is, and `bun:sqlite` is fitted to it in bun-sqlite.ts. The
 * statement wrapper (bindableDatabase in sqlite.ts), the migrations and the claim statements are
 * then the same for both.
 */
export interface SqliteConnection {
  /** The file this connection is on (`:memory:` for none). */
  readonly name: string;
  prepare(text: string): SqliteStatement;
  /** Run a `PRAGMA`; `simple` returns the first column of the first row. */
  pragma(text: string, options?: { simple?: boolean }): unknown;
  close(): unknown;
}

/** A prepared statement, parameters given as one array. */
export interface SqliteStatement {
  /** Whether the statement returns rows (a SELECT, or a write with RETURNING). */
  readonly reader: boolean;
  all(parameters: readonly unknown[]): unknown[];
  get(parameters: readonly unknown[]): unknown;
  run(parameters: readonly unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(parameters: readonly unknown[]): IterableIterator<unknown>;
}
