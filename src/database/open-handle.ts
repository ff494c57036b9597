import { Kysely, SqliteDialect } from "kysely";
import type BetterSqlite3 from "better-sqlite3";
import { ConfigurationError } from "../errors.js";
import { bridgeKysely } from "./bridge.js";
import { kyselySource, mysqlPoolSource, pgPoolSource } from "./clients.js";
import { ADAPTERS, assembleDatabase, type Database } from "./connection.js";
import { DEFAULT_CONNECTION_SETTINGS } from "./connection-settings.js";
import type { Db, DialectName } from "./dialect.js";
import {
  describeHandle,
  driverDialect,
  handleKind,
  type DatabaseHandle,
  type KyselyHandle,
  type PgPoolHandle,
} from "./handle.js";
import { JobsReadySignal } from "./jobs-ready.js";
import type { EndedJobsListener } from "./ended-jobs.js";
import { DEFAULT_TABLE_PREFIX, TableNames } from "./table-prefix.js";
import type { Schema } from "./schema.js";
import { bindableDatabase } from "./sqlite.js";
import { parseDatabaseUrl, type ParsedDatabaseUrl } from "./url.js";
import { withSchemaErrors } from "./missing-table.js";

/**
 * firm-queue's database on a handle the application passed in. Its queries go through the
 * handle's connections; `close()` stops firm-queue's own listener but never ends, closes or
 * destroys the handle, which belongs to the application.
 */
export async function openDatabaseHandle(
  handle: DatabaseHandle,
  options: { listenUrl?: string; schema?: string; tablePrefix?: string },
): Promise<Database> {
  const kind = handleKind(handle);
  const tableNames = new TableNames(options.tablePrefix ?? DEFAULT_TABLE_PREFIX);
  if (options.schema !== undefined) {
    throw new ConfigurationError(
      "The schema option applies to databases firm-queue opens from a databaseUrl; for your own pool, set its search_path",
    );
  }
  const dialect = kind === "kysely" ? kyselyDialect(handle as KyselyHandle) : driverDialect(kind);
  const adapter = await ADAPTERS[dialect]();
  let db: Db;
  if (kind === "better-sqlite3") {
    db = new Kysely<Schema>({
      dialect: withSchemaErrors(
        new SqliteDialect({ database: bindableDatabase(handle as BetterSqlite3.Database, { owned: false }) }),
      ),
    });
  } else {
    const source =
      kind === "pg-pool"
        ? pgPoolSource(handle as PgPoolHandle)
        : kind === "mysql2-pool"
          ? mysqlPoolSource(handle)
          : kyselySource(handle as KyselyHandle);
    db = bridgeKysely(dialect, source);
  }
  const listenAt = listenTarget(kind, handle, options.listenUrl);
  const listen =
    adapter.listenForReadyJobs && listenAt
      ? (onReady: () => void, onError: (error: unknown) => void) =>
          adapter.listenForReadyJobs!(
            listenAt,
            { poolSize: 1, ...DEFAULT_CONNECTION_SETTINGS, readyChannel: tableNames.readyChannel },
            onReady,
            onError,
          )
      : undefined;
  const jobsReady = new JobsReadySignal(listen);
  const listenForEndedJobs: EndedJobsListener | undefined =
    adapter.listenForEndedJobs && listenAt
      ? (onEnded, onError) =>
          adapter.listenForEndedJobs!(
            listenAt,
            { poolSize: 1, ...DEFAULT_CONNECTION_SETTINGS, endedChannel: tableNames.endedChannel },
            onEnded,
            onError,
          )
      : undefined;
  return assembleDatabase({
    db,
    adapter,
    displayUrl: describeHandle(handle),
    tableNames,
    jobsReady,
    ...(listenForEndedJobs ? { listenForEndedJobs } : {}),
    release: async () => {
      await jobsReady.close();
      // Ends only what the bridge or SqliteDialect set up: the handle stays open (see above).
      await db.destroy();
    },
  });
}

/**
 * Where a PostgreSQL LISTEN connection is opened: `listenUrl` when given, else a client with the
 * pool's own settings. A Kysely instance does not reveal its settings: without `listenUrl`,
 * workers learn of new jobs by polling (and from this process's enqueues).
 */
function listenTarget(
  kind: string,
  handle: DatabaseHandle,
  listenUrl: string | undefined,
): (ParsedDatabaseUrl & { clientConfig?: object }) | undefined {
  if (listenUrl !== undefined) return parseDatabaseUrl(listenUrl);
  if (kind === "pg-pool") return { dialect: "postgres", url: "", clientConfig: (handle as PgPoolHandle).options ?? {} };
  return undefined;
}

/** The database a Kysely instance speaks to, told by how it compiles a probe query. */
function kyselyDialect(kysely: KyselyHandle): DialectName {
  const probe = (kysely as unknown as Kysely<{ t: { c: number } }>)
    .selectFrom("t")
    .select("c")
    .where("c", "=", 1)
    .compile().sql;
  if (probe.includes("$1")) return "postgres";
  return probe.includes("`") ? "mysql" : "sqlite";
}
