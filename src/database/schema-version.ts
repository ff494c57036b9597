import { SchemaOutOfDateError } from "./schema-out-of-date-error.js";

export { SchemaOutOfDateError } from "./schema-out-of-date-error.js";
import { ADAPTERS, type Database } from "./connection.js";
import type { DialectName } from "./dialect.js";
import { MIGRATIONS } from "./migrations/index.js";
import { MIGRATIONS_TABLE, migrationStepSql, migrationsTableSql } from "./migrator.js";
import { DEFAULT_TABLE_NAMES, type TableNames } from "./table-prefix.js";

/** Versions applied to the database, read without creating anything (none when the table is absent). */
export async function appliedVersions(database: Database): Promise<string[]> {
  try {
    const rows = await database.db.selectFrom(MIGRATIONS_TABLE).select("version").orderBy("version").execute();
    return rows.map((row) => row.version);
  } catch (error) {
    // No migrations table yet: nothing applied. Anything else (a lost connection) is reported.
    if (await tableExists(database)) throw error;
    return [];
  }
}

async function tableExists(database: Database): Promise<boolean> {
  const introspected = await database.db.introspection.getTables({ withInternalKyselyTables: false });
  return introspected.some(
    (table) =>
      table.name === database.tableNames.sql(MIGRATIONS_TABLE) &&
      (database.schema === undefined || table.schema === database.schema),
  );
}

/** Throw {@link SchemaOutOfDateError} unless every migration this build knows is applied. */
export async function requireCurrentSchema(database: Database): Promise<void> {
  const applied = new Set(await appliedVersions(database));
  const pending = MIGRATIONS.map((migration) => migration.version).filter((version) => !applied.has(version));
  if (pending.length > 0) throw new SchemaOutOfDateError(pending);
}

/**
 * Every migration as a SQL script for `dialect`, each followed by the row that records it, for
 * teams that apply DDL with their own tool (Prisma Migrate, Knex, Flyway…). firm-queue's own
 * check at start then finds the schema current. No connection is needed. `tableNames`: for a
 * table prefix other than `firm_queue_`.
 */
export async function migrationScript(
  dialect: DialectName,
  tableNames: TableNames = DEFAULT_TABLE_NAMES,
): Promise<string> {
  const adapter = await ADAPTERS[dialect]();
  const lines = [`${migrationsTableSql(dialect)};`, ""];
  for (const migration of MIGRATIONS) {
    lines.push(`-- migration ${migration.version}`);
    for (const step of migration.steps)
      for (const statement of migrationStepSql(adapter, step)) lines.push(`${statement};`);
    lines.push(
      `INSERT INTO ${MIGRATIONS_TABLE} (version, applied_at) VALUES ('${migration.version}', CURRENT_TIMESTAMP);`,
      "",
    );
  }
  const header =
    `-- firm-queue schema for ${dialect}: ${MIGRATIONS.length} migrations, oldest first` +
    (tableNames.isDefault ? "." : `, table prefix ${tableNames.prefix}.`);
  return `${header}\n${tableNames.sql(lines.join("\n"))}`;
}
