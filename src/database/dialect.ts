import type { InsertQueryBuilder, Kysely, SelectQueryBuilder } from "kysely";
import type { ClaimedJob } from "./claimed-job.js";
import type { Schema } from "./schema.js";
import type { EdgeInsert, NewJob, ReadyJob } from "./insert-rows.js";

/** The databases firm-queue runs on. MariaDB is spoken to as `mysql`. */
export type DialectName = "sqlite" | "postgres" | "mysql";

/** A unique index, described well enough to recognise a violation of it on every database. */
export interface UniqueIndex {
  readonly name: string;
  readonly table: string;
  readonly columns: readonly string[];
}

/** A Kysely handle on firm-queue's tables: the pool, or one transaction. */
export type Db = Kysely<Schema>;

/** One claim of ready jobs: one queue (or every queue but `exclude`), for one process. */
export interface ReadyClaim {
  readonly queue?: string;
  readonly exclude: readonly string[];
  readonly limit: number;
  /**
   * How many of the claimed jobs (the first, in claim order) go straight to free slots: their
   * claims are written already marked started, and each is returned with `claim_started` set.
   */
  readonly startNow: number;
  readonly processId: number;
  readonly now: Date;
}

/** The jobs a claim took, in claim order; `processGone` when jobs were ready but the process row is not there. */
export interface ReadyClaimResult {
  readonly jobs: ClaimedJob[];
  readonly processGone: boolean;
}

/** Jobs due now without a concurrency key, to insert and make ready at once. */
export interface ReadyEnqueue {
  readonly jobs: readonly {
    readonly queueName: string;
    readonly className: string;
    /** JSON text as `serializeArguments` writes it (no raw control characters: PostgreSQL's statement relies on it). */
    readonly arguments: string;
    readonly priority: number;
    /** JSON text of the enqueue's trace context (migration 006); absent: none. */
    readonly traceContext?: string | null;
  }[];
  readonly now: Date;
}

/** Successful attempts to record for one process (jobs without a concurrency key). */
export interface FinishBatch {
  readonly jobIds: readonly number[];
  /**
   * Claims of this process (none among `jobIds`) whose handlers have started since they were
   * claimed: marked started (`started_at`) in the same statement or transaction.
   */
  readonly startedIds: readonly number[];
  readonly processId: number;
  readonly now: Date;
  /** Keep finished jobs (`finished_at` set) rather than delete them. */
  readonly preserve: boolean;
  /**
   * Those of `jobIds` that belong to a batch (a job's batch is written with it and never changes):
   * a finish need not look up the memberships of the others.
   */
  readonly batchJobIds: readonly number[];
  /** The batches of `batchJobIds`, each once. */
  readonly batchIds: readonly number[];
}

/**
 * The seam between databases: the only place that knows which database it talks to. Code outside
 * src/database/ never reads the dialect's name; it calls these members.
 *
 * Correctness first, as in the claim path. Two workers must never select the same row;
 * how that is guaranteed differs per database and is all this interface abstracts. Every path that
 * selects rows it is about to change runs inside {@link Dialect.beginClaimTx} and wraps that
 * SELECT in {@link Dialect.withSkipLocked}.
 */
export interface Dialect {
  readonly name: DialectName;
  /** Whether `UPDATE … RETURNING` works (MariaDB has it for INSERT and DELETE only). */
  readonly returnsFromUpdate: boolean;
  /**
   * Run `work` in a transaction that may select rows and then change them. SQLite takes the
   * database write lock up front (`BEGIN IMMEDIATE`), which serializes claimers, even across
   * processes; PostgreSQL and MySQL use a plain `BEGIN` and rely on row locks.
   */
  beginClaimTx<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T>;
  /**
   * Lock the selected rows and skip rows another transaction holds (`FOR UPDATE SKIP LOCKED`).
   * A no-op on SQLite, where the write lock taken by `beginClaimTx` already serializes.
   */
  withSkipLocked<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O>;
  /**
   * Run `work` in a transaction that writes (enqueue, recurring tasks, failed-job operations) and
   * does not claim. Same locking as {@link Dialect.beginClaimTx} today (SQLite must take its write
   * lock up front or two writers could deadlock upgrading), but named apart so a reader sees
   * which transactions claim rows.
   */
  beginWriteTx<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T>;
  /**
   * Lock the selected rows until the transaction ends, waiting for other holders
   * (`FOR UPDATE`). A no-op on SQLite, whose write lock already serializes writers.
   */
  withRowLock<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O>;
  /**
   * Make an INSERT do nothing when a row with the same `column` exists, without raising (a
   * failed INSERT would abort a PostgreSQL transaction): `ON CONFLICT DO NOTHING`, or
   * `INSERT IGNORE` on MariaDB.
   */
  ignoringConflicts<DB, TB extends keyof DB, O>(
    query: InsertQueryBuilder<DB, TB, O>,
    column: string | readonly string[],
  ): InsertQueryBuilder<DB, TB, O>;
  /** Whether `error` is a duplicate-key error on exactly `index` (see `isUniqueViolation`). */
  isUniqueViolation(error: unknown, index: UniqueIndex): boolean;
  /**
   * Hold the selected rows in share mode until the transaction ends: others may read or
   * share-lock them, but not change or delete them (and `withSkipLocked` selects pass over them).
   * A no-op on SQLite, whose write lock already serializes writers.
   */
  withShareLock<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O>;
  /**
   * Make a SELECT see rows other transactions committed since this transaction began: a shared
   * locking read on MariaDB (whose REPEATABLE READ snapshot would hide them), a no-op on
   * PostgreSQL (READ COMMITTED: each statement sees what was committed before it) and SQLite
   * (the write lock serializes writers).
   */
  withLatestRead<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O>;
  /** The database server's current time (the clock every process compares rows by). */
  databaseTime(db: Db): Promise<Date>;
  /**
   * Make the rest of the transaction find its rows through their indexes: an ordered read
   * (`ORDER BY … LIMIT n`) walks an index that has the order, and a read or delete of rows by key
   * looks them up, never sorting or scanning every row of the table. PostgreSQL's planner, misled
   * by its statistics (none yet for a table just filled, or a key it believes rare), read and
   * sorted every job waiting for a budget to take the first few, and scanned them all again to
   * delete those few, on each budget claim; it is told not to (`enable_sort` and
   * `enable_seqscan` off for the transaction). Absent elsewhere: SQLite and MariaDB use the
   * indexes for these statements.
   */
  readonly readsByIndex?: (trx: Db) => Promise<void>;
  /*
   * Hot-path statements: optional. A database that can do one of these in a single statement
   * (one round trip, one commit) provides it; the others use the portable transaction, which does
   * the same in several statements. Each keeps the same rules as the portable path.
   */
  /**
   * Claim ready jobs in one statement: rows other claimers hold are skipped, paused queues are
   * not claimed, and the claiming process's row is share-locked in the same statement (nothing is
   * claimed when it is gone).
   */
  readonly claimReady?: (db: Db, claim: ReadyClaim) => Promise<ReadyClaimResult>;
  /**
   * Record successful attempts in one statement, through the stale-worker guard: only jobs whose
   * claim the process still holds are recorded; returns their ids. A job that has dependents
   * (`has_dependents`, read under the job's row lock: a dependent may have been added since the
   * claim) is left as it was, claimed, for the portable transaction to finish and release them.
   */
  readonly finishClaimed?: (db: Db, batch: FinishBatch) => Promise<number[]>;
  /**
   * Record successful attempts of jobs that may have dependents or belong to a batch (none with a
   * concurrency key, unique key or result), in one statement or transaction, through the same
   * stale-worker guard: their dependency edges and batch memberships are marked finished, and
   * their dependents' counts of unmet dependencies and their batches' counts lowered, in id
   * order. When one of those counts would reach 0 (a dependent to dispatch, a batch to end),
   * nothing is recorded: every job goes to the portable transaction, which does that work.
   * Returns the ids recorded.
   */
  readonly finishCounted?: (db: Db, batch: FinishBatch) => Promise<number[]>;
  /**
   * Insert jobs that are due now and have no concurrency key, and make them ready, in one
   * statement; returns their ids in input order.
   */
  readonly enqueueReady?: (db: Db, batch: ReadyEnqueue) => Promise<number[]>;
  /**
   * The row writes of an enqueue of many jobs (a flow, a batch) in one statement per table,
   * whatever their number. Absent: one multi-row INSERT per 1,000 rows.
   */
  readonly bulkInsert?: BulkInsert;
  /**
   * Where the database announces the end of awaited jobs (PostgreSQL): flag these jobs as
   * awaited, so their end is announced. Absent elsewhere: waiters poll.
   */
  readonly markAwaited?: (db: Db, jobIds: readonly number[]) => Promise<void>;
}

/**
 * One statement per table for the rows of a large enqueue, each writing exactly what the portable
 * multi-row INSERT would (see postgres-bulk-insert.ts). Called with at least two rows.
 */
export interface BulkInsert {
  /** Insert jobs; their ids in input order. */
  jobs(db: Db, jobs: readonly NewJob[], now: Date): Promise<number[]>;
  /** Insert dependency edges. */
  dependencies(db: Db, edges: readonly EdgeInsert[], now: Date): Promise<void>;
  /** Insert ready rows. */
  ready(db: Db, jobs: readonly ReadyJob[], now: Date): Promise<void>;
  /** Record jobs as members of a batch. */
  batchJobs(db: Db, batchId: number, jobIds: readonly number[], now: Date): Promise<void>;
}
