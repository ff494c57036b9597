import type { QueryResult } from "kysely";

const WRITE_COMMANDS = new Set(["INSERT", "UPDATE", "DELETE", "MERGE"]);

/**
 * Any SQL client's answer in Kysely's result shape: node-postgres results (`rows`, `rowCount`,
 * `command`), mysql2's rows or OK packet (alone or in its `[result, fields]` pair), better-sqlite3's
 * rows or run result (`changes`, `lastInsertRowid`), or a bare array of rows.
 */
export function normalizeResult(result: unknown): QueryResult<unknown> {
  if (Array.isArray(result)) {
    const [first] = result;
    // mysql2 (and Knex, Drizzle on mysql2) answer [rows or OK packet, fields].
    if (
      result.length === 2 &&
      (Array.isArray(first) || isOkPacket(first)) &&
      (result[1] === undefined || Array.isArray(result[1]))
    ) {
      return normalizeResult(first);
    }
    return { rows: result };
  }
  if (typeof result !== "object" || result === null) return { rows: [] };
  const record = result as Record<string, unknown>;
  if (Array.isArray(record.rows)) {
    const command = typeof record.command === "string" ? record.command : "";
    const written = WRITE_COMMANDS.has(command) && typeof record.rowCount === "number";
    return { rows: record.rows, ...(written ? { numAffectedRows: BigInt(record.rowCount as number) } : {}) };
  }
  if (isOkPacket(result)) {
    const insertId = record.insertId as number | bigint;
    return {
      rows: [],
      numAffectedRows: BigInt(record.affectedRows as number),
      ...(Number(insertId) > 0 ? { insertId: BigInt(insertId) } : {}),
    };
  }
  if (typeof record.changes === "number") {
    return { rows: [], numAffectedRows: BigInt(record.changes), insertId: BigInt(record.lastInsertRowid as number) };
  }
  return { rows: [] };
}

function isOkPacket(value: unknown): boolean {
  return typeof value === "object" && value !== null && "affectedRows" in value && "insertId" in value;
}

/** Whether SQLite returns rows for this statement (better-sqlite3 needs `all` rather than `run`). */
export function returnsRows(sql: string): boolean {
  return /^\s*(select|with|pragma|values)\b/i.test(sql) || /\breturning\b/i.test(sql);
}
