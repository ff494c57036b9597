import type { DialectName } from "./dialect.js";

/**
 * A value firm-queue writes, as every driver of `dialect` binds it, whatever the connection's
 * settings: the application's own connection may lack what firm-queue's pools configure.
 * SQLite drivers bind neither `Date` nor `boolean`: dates become ISO-8601 UTC text (the format
 * firm-queue stores), booleans 0/1. MySQL drivers write a `Date` in the connection's time zone,
 * so it becomes UTC `DATETIME` text, which is how firm-queue stores time there. PostgreSQL's
 * columns carry their zone: a `Date` is bound as is.
 */
export function bindableValue(dialect: DialectName, value: unknown): unknown {
  if (value instanceof Date) {
    if (dialect === "sqlite") return value.toISOString();
    if (dialect === "mysql") return value.toISOString().slice(0, 23).replace("T", " ");
    return value;
  }
  if (typeof value === "boolean" && dialect === "sqlite") return value ? 1 : 0;
  return value;
}

/** {@link bindableValue} of every parameter. */
export function bindableParameters(dialect: DialectName, parameters: readonly unknown[]): unknown[] {
  return parameters.map((value) => bindableValue(dialect, value));
}
