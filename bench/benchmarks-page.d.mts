// Declarations for benchmarks-page.mjs, so TypeScript (which has no allowJs here) can import it.
// Keep in step with the script.

/** One system's medians over a `bench:peers --json` file's rounds. */
export interface SystemSummary {
  readonly id: string;
  readonly label: string;
  readonly version: string;
  readonly enqueueOne: number;
  readonly enqueueBatch: number;
  readonly processing: number;
  /** Processing against firm-queue on PostgreSQL in the same round, median over rounds. */
  readonly processingRatio: number;
  readonly median: number;
  readonly p99: number;
  readonly rss: number;
  /** CPU per 1,000 jobs processed, ms: the worker process's, and the database server's (NaN without one: SQLite). */
  readonly workerCpu: number;
  readonly serverCpu: number;
  /** Bytes of WAL or InnoDB redo log per job processed (NaN on SQLite, and in files older than the column). */
  readonly logPerJob: number;
}

export interface Summary {
  readonly heading: string;
  readonly rounds: number;
  readonly systems: readonly SystemSummary[];
}

/** Read a `bench:peers --json` file (its durable report, else its first). */
export declare function summarize(file: string): Summary;
/** The page's figures block, marks included; `source` is the file's path from the repository root. */
export declare function table(summary: Summary, source: string): string;
/** The processing chart as SVG text. */
export declare function chart(summary: Summary): string;
