import type { FirmQueue } from "../firm-queue.js";
import type { DialectName } from "../database/dialect.js";
import { MIGRATIONS } from "../database/migrations/index.js";
import { appliedVersions, migrationScript } from "../database/schema-version.js";
import { parseDatabaseUrl } from "../database/url.js";
import { TableNames } from "../database/table-prefix.js";

/** `firm-queue migrate` flags that report instead of migrating. */
export interface MigrateOptions {
  /** List applied and pending migrations. */
  readonly status?: boolean;
  /** Print the SQL: `true` for the database URL's kind, or a database name. */
  readonly printSql?: boolean | DialectName;
}

/**
 * `migrate --print-sql` (the script for the named database, or the URL's, connecting only when
 * the instance was given a handle rather than a URL) and `migrate --status` (connects, changes
 * nothing; sets exit code 1 when migrations are pending).
 */
export async function migrateReport(firm: FirmQueue, options: MigrateOptions): Promise<string> {
  if (options.printSql !== undefined) {
    const dialect =
      typeof options.printSql === "string"
        ? options.printSql
        : firm.options.database === undefined
          ? parseDatabaseUrl(firm.options.databaseUrl).dialect
          : (await firm.database()).dialect.name;
    return migrationScript(dialect, new TableNames(firm.options.tablePrefix));
  }
  const applied = await appliedVersions(await firm.database());
  const pending = MIGRATIONS.map((migration) => migration.version).filter((version) => !applied.includes(version));
  if (pending.length > 0) process.exitCode = 1;
  return [
    `applied: ${applied.join(", ") || "(none)"}`,
    `pending: ${pending.join(", ") || "(none)"}`,
    pending.length > 0 ? 'Run "firm-queue migrate" to apply the pending migrations.' : "Schema is up to date.",
  ].join("\n");
}
