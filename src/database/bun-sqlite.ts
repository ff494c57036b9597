import type { SqliteConnection, SqliteStatement } from "./sqlite-connection.js";

/** The members of Bun's `bun:sqlite` Database used here (Bun's own types are not a dependency). */
interface BunDatabase {
  readonly filename: string;
  prepare(text: string): BunStatement;
  close(): void;
}

interface BunStatement {
  readonly columnNames: readonly string[];
  all(...parameters: unknown[]): unknown[];
  get(...parameters: unknown[]): unknown;
  run(...parameters: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  iterate(...parameters: unknown[]): IterableIterator<unknown>;
}

/** The `bun:sqlite` module, or undefined where it does not exist (every runtime but Bun). */
export async function loadBunSqlite(): Promise<{ Database: new (filename: string) => BunDatabase } | undefined> {
  if (typeof (process.versions as { bun?: string }).bun !== "string") return undefined;
  // A specifier in a variable: type-checkers and bundlers for Node must not try to resolve it.
  const specifier = "bun:sqlite";
  return (await import(specifier)) as { Database: new (filename: string) => BunDatabase };
}

/**
 * A `bun:sqlite` Database in the shape of better-sqlite3's (see sqlite-connection.ts): Bun's
 * statements take their parameters spread rather than as one array, say whether they return
 * rows by their column names, and its Database has no `pragma()`.
 */
export function bunSqliteConnection(database: BunDatabase): SqliteConnection {
  return {
    name: database.filename,
    prepare: (text) => bunStatement(database.prepare(text)),
    pragma(text, options) {
      const statement = database.prepare(`PRAGMA ${text}`);
      if (!options?.simple) return statement.all();
      const row = statement.get() as Record<string, unknown> | null;
      return row === null ? undefined : Object.values(row)[0];
    },
    close: () => database.close(),
  };
}

function bunStatement(statement: BunStatement): SqliteStatement {
  return {
    reader: statement.columnNames.length > 0,
    all: (parameters) => statement.all(...parameters),
    get: (parameters) => statement.get(...parameters) ?? undefined,
    run: (parameters) => statement.run(...parameters),
    iterate: (parameters) => statement.iterate(...parameters),
  };
}
