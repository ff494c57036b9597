import { sql } from "kysely";
import type { Database } from "../../src/database/connection.js";
import type { DialectName } from "../../src/database/dialect.js";
import { MIGRATIONS } from "../../src/database/migrations/index.js";
import { migrationStepSql, migrationsTableSql } from "../../src/database/migrator.js";

/**
 * Give a fresh database the schema as the migrations before `version` left it (recorded as
 * applied, as `migrate` records them), to test what migrating from there does to rows written
 * then. Returns how many migrations that is: `MIGRATIONS.slice(count)` are the ones left.
 */
export async function migrateBefore(database: Database, dialect: DialectName, version: string): Promise<number> {
  const count = MIGRATIONS.findIndex((migration) => migration.version === version);
  if (count < 0) throw new Error(`no migration ${version}`);
  await sql.raw(migrationsTableSql(dialect)).execute(database.db);
  for (const migration of MIGRATIONS.slice(0, count)) {
    for (const step of migration.steps)
      for (const statement of migrationStepSql(database.adapter, step)) await sql.raw(statement).execute(database.db);
    await database.db
      .insertInto("firm_queue_schema_migrations")
      .values({ version: migration.version, applied_at: new Date() })
      .execute();
  }
  return count;
}
