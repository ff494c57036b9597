import type { DialectName, UniqueIndex } from "./dialect.js";

export type { UniqueIndex } from "./dialect.js";

/**
 * Whether `error` is a duplicate-key error on exactly `index`, and not on some other unique
 * index or a different failure. Callers treat such a violation as "someone else already wrote
 * this row"; anything else must still surface, so each check is precise:
 * - PostgreSQL: SQLSTATE 23505 with the index as the violated constraint;
 * - MariaDB: ER_DUP_ENTRY (1062) naming the index as its key;
 * - SQLite: SQLITE_CONSTRAINT_UNIQUE naming the index's columns (SQLite names no index).
 */
export function isUniqueViolation(dialect: DialectName, error: unknown, index: UniqueIndex): boolean {
  if (typeof error !== "object" || error === null) return false;
  const details = error as { code?: unknown; errno?: unknown; constraint?: unknown; message?: unknown };
  const message = typeof details.message === "string" ? details.message : "";
  switch (dialect) {
    case "postgres":
      return details.code === "23505" && details.constraint === index.name;
    case "mysql":
      return details.errno === 1062 && new RegExp(`for key '(?:[^']*\\.)?${escapeRegExp(index.name)}'$`).test(message);
    case "sqlite": {
      const columns = index.columns.map((column) => `${index.table}.${column}`).join(", ");
      return details.code === "SQLITE_CONSTRAINT_UNIQUE" && message === `UNIQUE constraint failed: ${columns}`;
    }
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
