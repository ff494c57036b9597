import { CompiledQuery, sql } from "kysely";
import type { Database } from "./connection.js";
import type { DatabaseAdapter } from "./adapter.js";
import type { Db, DialectName } from "./dialect.js";
import { MIGRATIONS } from "./migrations/index.js";
import type { Migration, MigrationStep } from "./migrations/table-spec.js";

/** The table recording which migrations a database has (as written: `db` renames it per prefix). */
export const MIGRATIONS_TABLE = "firm_queue_schema_migrations";

/**
 * Apply the migrations this database has not seen yet, oldest first, and return their versions.
 * A lock held for the whole run makes a second migrator (another process) wait, then find
 * nothing left to do; running it again is a no-op.
 */
export async function migrate(database: Database): Promise<string[]> {
  const { adapter } = database;
  return adapter.withMigrationLock(database.db, async (connection) => {
    // Compiled as is: the schema is the user's name, not one of firm-queue's to be prefixed.
    if (database.schema !== undefined)
      await connection.executeQuery(CompiledQuery.raw(`CREATE SCHEMA IF NOT EXISTS ${database.schema}`));
    await createMigrationsTable(database, connection);
    const applied = new Set(
      (await connection.selectFrom(MIGRATIONS_TABLE).select("version").execute()).map((row) => row.version),
    );
    const done: string[] = [];
    for (const migration of MIGRATIONS) {
      if (applied.has(migration.version)) continue;
      await adapter.inMigrationTransaction(connection, (trx) => applyMigration(database, trx, migration));
      done.push(migration.version);
    }
    return done;
  });
}

async function createMigrationsTable(database: Database, connection: Db): Promise<void> {
  await sql.raw(migrationsTableSql(database.dialect.name)).execute(connection);
}

/** The DDL of the table that records applied migrations. */
export function migrationsTableSql(dialect: DialectName): string {
  const timestamp = { sqlite: "TEXT", postgres: "TIMESTAMP(6) WITH TIME ZONE", mysql: "DATETIME(6)" }[dialect];
  return `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version VARCHAR(255) NOT NULL PRIMARY KEY, applied_at ${timestamp} NOT NULL)`;
}

async function applyMigration(database: Database, trx: Db, migration: Migration): Promise<void> {
  for (const step of migration.steps) {
    for (const statement of statementsOf(database, step)) await sql.raw(statement).execute(trx);
  }
  await trx.insertInto(MIGRATIONS_TABLE).values({ version: migration.version, applied_at: new Date() }).execute();
}

function statementsOf(database: Database, step: MigrationStep): string[] {
  return migrationStepSql(database.adapter, step);
}

/** The statements of one migration step on the adapter's database. */
export function migrationStepSql(adapter: DatabaseAdapter, step: MigrationStep): string[] {
  if ("createTable" in step) return adapter.ddl.createTable(step.createTable);
  const statement = step.sql[adapter.dialect.name];
  return statement === undefined ? [] : [statement];
}
