import { sql, type RawBuilder } from "kysely";
import type { Db } from "../database/dialect.js";

/** Jobs that ended in one time bucket. */
export interface ThroughputBucket {
  /** Start of the bucket; it lasts until the next bucket's start. */
  readonly start: Date;
  /** Jobs finished in it (kept finished jobs only: none are counted when finished jobs are deleted). */
  readonly finished: number;
  /** Jobs that failed for good in it and are still failed (retried or discarded ones drop out). */
  readonly failed: number;
}

/**
 * Finished and failed jobs per bucket over the `buckets` buckets of `bucketMs` ending at `now`
 * (bucket edges aligned to whole multiples of `bucketMs`), in SQL every database runs the same.
 * Finished jobs: one range count per bucket on the `(finished_at)` index, all in one UNION ALL
 * statement (an index range count per bucket is far cheaper than testing every row of the hour
 * against every bucket). Failed jobs have no index on their time, so their rows of the window
 * are read once and summed per bucket with CASE.
 */
export async function throughputBuckets(
  db: Db,
  now: Date,
  buckets: number,
  bucketMs: number,
): Promise<ThroughputBucket[]> {
  const end = Math.floor(now.getTime() / bucketMs) * bucketMs + bucketMs;
  const edges = Array.from({ length: buckets + 1 }, (_, index) => new Date(end - (buckets - index) * bucketMs));
  const sums = (column: RawBuilder<unknown>) =>
    edges
      .slice(0, -1)
      .map((edge, index) =>
        sql<number>`SUM(CASE WHEN ${column} >= ${edge} AND ${column} < ${edges[index + 1]!} THEN 1 ELSE 0 END)`.as(
          `b${index}`,
        ),
      );
  const finishedCounts = edges
    .slice(0, -1)
    .map(
      (edge, index) =>
        sql`SELECT ${sql.lit(index)} AS bucket, COUNT(*) AS count FROM firm_queue_jobs WHERE finished_at >= ${edge} AND finished_at < ${edges[index + 1]!}`,
    );
  const [finishedRows, failed] = await Promise.all([
    sql<{
      bucket: number | string;
      count: number | string | bigint;
    }>`${sql.join(finishedCounts, sql` UNION ALL `)}`.execute(db),
    db
      .selectFrom("firm_queue_failed_executions")
      .select(sums(sql`created_at`))
      .where("created_at", ">=", edges[0]!)
      .where("created_at", "<", edges.at(-1)!)
      .executeTakeFirst(),
  ]);
  const finished = new Map(finishedRows.rows.map((row) => [Number(row.bucket), Number(row.count)]));
  const read = (row: Record<string, unknown> | undefined, index: number) => Number(row?.[`b${index}`] ?? 0);
  return edges.slice(0, -1).map((start, index) => ({
    start,
    finished: finished.get(index) ?? 0,
    failed: read(failed as Record<string, unknown> | undefined, index),
  }));
}
