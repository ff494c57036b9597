import type { ReplicaState } from "./replica-state.js";
import type { Kysely } from "kysely";
import type { Db, Dialect } from "./dialect.js";
import type { DdlRenderer } from "./migrations/table-spec.js";
import type { Schema } from "./schema.js";
import type { ParsedDatabaseUrl } from "./url.js";
import type { ConnectionSettings } from "./connection-settings.js";

/** Connection settings that are not part of the URL. */
export interface OpenOptions extends ConnectionSettings {
  /** PostgreSQL: the schema every connection works in (its `search_path`). */
  readonly schema?: string;
  /** PostgreSQL: the channel ready jobs are announced on; default `firm_queue_ready` (see table-prefix.ts). */
  readonly readyChannel?: string;
  /** PostgreSQL: the channel awaited jobs' ends are announced on; default `firm_queue_job_ended`. */
  readonly endedChannel?: string;
}

/**
 * What firm-queue needs from one database beyond the claim seam: opening a pool, rendering
 * migrations, and serializing migrators across processes. One small file per database.
 */
export interface DatabaseAdapter {
  readonly dialect: Dialect;
  readonly ddl: DdlRenderer;
  open(url: ParsedDatabaseUrl, options: OpenOptions): Promise<Kysely<Schema>>;
  /**
   * Let an open pool hold up to `poolSize` connections (a process that learns its role after
   * opening the pool, such as an app that enqueued before starting workers). Absent where the
   * pool has one connection (SQLite).
   */
  resizePool?(db: Kysely<Schema>, poolSize: number): void;
  /** Run `work` while holding a lock that only one migrator, in any process, can hold. */
  withMigrationLock<T>(db: Db, work: (connection: Db) => Promise<T>): Promise<T>;
  /** Run one migration's statements atomically where the database allows it. */
  inMigrationTransaction<T>(connection: Db, work: (trx: Db) => Promise<T>): Promise<T>;
  /**
   * Where the database can announce new ready jobs to every process (PostgreSQL's NOTIFY, sent
   * by a trigger on ready executions): listen on a connection of its own, reconnecting when it is
   * lost. Absent elsewhere: workers rely on polling.
   */
  listenForReadyJobs?(
    url: ParsedDatabaseUrl & { readonly clientConfig?: object },
    settings: OpenOptions,
    onReady: () => void,
    onError: (error: unknown) => void,
  ): Promise<() => Promise<void>>;
  /**
   * Where the database can announce that awaited jobs ended (PostgreSQL's NOTIFY, sent by
   * migration 011's triggers with the job's id): listen on a connection of its own, as
   * {@link listenForReadyJobs}. `onEnded` gets `undefined` on each (re)connection. Absent
   * elsewhere: waiters poll.
   */
  listenForEndedJobs?(
    url: ParsedDatabaseUrl & { readonly clientConfig?: object },
    settings: OpenOptions,
    onEnded: (jobId: number | undefined) => void,
    onError: (error: unknown) => void,
  ): Promise<() => Promise<void>>;
  /**
   * How many connections the server lets ordinary clients open in all (its `max_connections`
   * less any reserved for superusers), and how many are open now; for `firm-queue check`. Absent
   * where there is no server (SQLite).
   */
  connectionLimit?(db: Db): Promise<{ readonly max: number; readonly inUse: number }>;
  /**
   * Server settings of a replicated or clustered database that break firm-queue's guarantees
   * there (docs/high-availability.md), as read on firm-queue's own session; for `firm-queue
   * check`. Empty when none applies; absent where there is no server.
   */
  clusterWarnings?(db: Db): Promise<readonly ClusterWarning[]>;
  /**
   * What this server says about its own replication (standby, replica, Galera node or none) and
   * how far it trails; for reads from a replica (`readUrl`). Absent where there is no server.
   */
  replicaState?(db: Db): Promise<ReplicaState>;
}

/** One setting that breaks a guarantee on a cluster, and what it breaks. */
export interface ClusterWarning {
  /** The server setting, e.g. `synchronous_standby_names`. */
  readonly setting: string;
  /** Its value as read, and what follows from it. */
  readonly message: string;
}
