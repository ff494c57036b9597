import { ConfigurationError } from "./errors.js";

/** Earliest and latest instants stored in a timestamp column: what every database can hold and sort. */
const EARLIEST = Date.UTC(1000, 0, 1);
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * Check that `date` can be stored the same way on every database. MariaDB's DATETIME ends at
 * year 9999, and on SQLite a later year's ISO text ("+010000-…") would sort before today's and
 * run at once; so the same range (years 1000 to 9999) is accepted everywhere.
 */
export function checkStorableDate(date: Date, what: string): Date {
  const time = date.getTime();
  if (Number.isNaN(time) || time < EARLIEST || time > LATEST) {
    throw new ConfigurationError(
      `${what} must be a time between the years 1000 and 9999, got ${Number.isNaN(time) ? "an invalid Date" : String(time) + " ms since 1970"}`,
    );
  }
  return date;
}
