import { ConfigurationError } from "./errors.js";
import { shown } from "./shown-value.js";

/** The database used when nothing at all is configured (development and tests only). */
export const DEFAULT_DATABASE_URL = "sqlite:firm-queue.sqlite3";

/**
 * The URL firm-queue opens. The SQLite default applies only when nothing is configured at all:
 * a `databaseUrl` that was passed but is empty or undefined (typically an unset environment
 * variable), or no database under `NODE_ENV=production`, is an error rather than a quiet local
 * file that a web process would enqueue into.
 */
export function resolveDatabaseUrl(
  options: { readonly databaseUrl?: string },
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  if (Object.hasOwn(options, "databaseUrl")) return checkUrlText(options.databaseUrl, "databaseUrl");
  const fromEnv = env.FIRM_QUEUE_DATABASE_URL;
  if (fromEnv !== undefined) return checkUrlText(fromEnv, "FIRM_QUEUE_DATABASE_URL");
  if (env.NODE_ENV === "production") throw new MissingDatabaseError();
  return DEFAULT_DATABASE_URL;
}

/** `value` as a URL string, or a ConfigurationError naming `what` when it is absent or blank. */
export function checkUrlText(value: unknown, what: string): string {
  if (typeof value !== "string" || value.trim() === "") {
    throw new ConfigurationError(
      `${what} was given but is ${value === undefined ? "undefined" : JSON.stringify(value)}: ` +
        "set it to a database URL (is an environment variable missing?), or leave it out entirely for the development default",
    );
  }
  return value;
}

/** A PostgreSQL schema name firm-queue can put unquoted into SQL: letters, digits, underscores. */
export function checkSchemaName(value: unknown): string {
  if (typeof value !== "string" || !/^[a-z_][a-z0-9_]{0,62}$/.test(value)) {
    throw new ConfigurationError(
      `schema must be a lower-case PostgreSQL identifier (letters, digits, _), got ${shown(value)}`,
    );
  }
  return value;
}

/** NODE_ENV=production and no database configured. */
export class MissingDatabaseError extends ConfigurationError {
  constructor() {
    super(
      "No database configured and NODE_ENV is production: pass databaseUrl or database to new FirmQueue(), " +
        "or set FIRM_QUEUE_DATABASE_URL (the sqlite:firm-queue.sqlite3 default is for development only)",
    );
  }
}
