import { DatabaseUrlError } from "../errors.js";
import type { DialectName } from "./dialect.js";
import { postgresHosts } from "./postgres-hosts.js";

/** A database URL taken apart just enough to pick a driver. */
export interface ParsedDatabaseUrl {
  readonly dialect: DialectName;
  /** The original URL (may hold a password: never log it unredacted). */
  readonly url: string;
  /** For SQLite: the file path, or `:memory:`. */
  readonly filename?: string;
}

/**
 * Accepted forms: `sqlite:path/to/file.sqlite3`, `sqlite:///absolute/path.sqlite3`,
 * `sqlite::memory:`, `postgres://…` / `postgresql://…` (with one host or several, comma-separated),
 * `mysql://…` / `mariadb://…`.
 */
export function parseDatabaseUrl(url: string): ParsedDatabaseUrl {
  if (typeof url !== "string" || url.trim() === "") throw new DatabaseUrlError(String(url), "it is empty");
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  switch (scheme) {
    case "sqlite":
    case "sqlite3": {
      let filename = url.slice(scheme.length + 1);
      if (filename.startsWith("//")) filename = filename.slice(2);
      if (filename === "") throw new DatabaseUrlError(url, "no file name after sqlite:");
      return { dialect: "sqlite", url, filename };
    }
    case "postgres":
    case "postgresql":
      // Several hosts (host1:5432,host2:5432) are libpq's failover form: each must be valid.
      for (const host of postgresHosts(url).hosts) requireHost(host.url);
      return { dialect: "postgres", url };
    case "mysql":
    case "mariadb":
      requireHost(url);
      return { dialect: "mysql", url };
    case undefined:
      throw new DatabaseUrlError(url, "it has no scheme; use sqlite:, postgres:// or mysql://");
    default:
      throw new DatabaseUrlError(url, `unsupported scheme "${scheme}:"; use sqlite:, postgres:// or mysql://`);
  }
}

function requireHost(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DatabaseUrlError(url, "it is not a valid URL");
  }
  if (parsed.hostname === "") throw new DatabaseUrlError(url, "it names no host");
}
