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
 * (bucket edges aligned to whole multiples of `bucketMs`). One range read per table on its time
 * column ((finished_at) and the failed rows' time), with the bucketing done by CASE sums so the
 * same SQL runs on every database.
 */
export async function throughputBuckets(db: Db, now: Date, buckets: number, bucketMs: number): Promise<ThroughputBucket[]> {
  const end = Math.floor(now.getTime() / bucketMs) * bucketMs + bucketMs;
  const edges = Array.from({ length: buckets + 1 }, (_, index) => new Date(end - (buckets - index) * bucketMs));
  const sums = (column: RawBuilder<unknown>) =>
    edges.slice(0, -1).map((edge, index) => sql<number>`SUM(CASE WHEN ${column} >= ${edge} AND ${column} < ${edges[index + 1]!} THEN 1 ELSE 0 END)`.as(`b${index}`));
  const [finished, failed] = await Promise.all([
    db
      .selectFrom("firm_queue_jobs")
      .select(sums(sql`finished_at`))
      .where("finished_at", ">=", edges[0]!)
      .where("finished_at", "<", edges.at(-1)!)
      .executeTakeFirst(),
    db
      .selectFrom("firm_queue_failed_executions")
      .select(sums(sql`created_at`))
      .where("created_at", ">=", edges[0]!)
      .where("created_at", "<", edges.at(-1)!)
      .executeTakeFirst(),
  ]);
  const read = (row: Record<string, unknown> | undefined, index: number) => Number(row?.[`b${index}`] ?? 0);
  return edges.slice(0, -1).map((start, index) => ({
    start,
    finished: read(finished as Record<string, unknown> | undefined, index),
    failed: read(failed as Record<string, unknown> | undefined, index),
  }));
}
