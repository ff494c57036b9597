import { sql } from "kysely";
import type { Db } from "../database/dialect.js";
import { toDate } from "../database/schema.js";
import { toSummary, type JobSummary, type ListedRow } from "./job-listing.js";

/** One concurrency key: its semaphore, the jobs holding its slots and the jobs waiting for one. */
export interface SemaphoreUsage {
  /** The stored key, `group/key`. */
  readonly key: string;
  /** Slots per key from the job definition; null when no holder's or waiter's job is defined in this process. */
  readonly limit: number | null;
  /** Free slots the semaphore row records; null when there is no row (every slot free, or expired and deleted). */
  readonly available: number | null;
  /** When the semaphore expires if nothing touches it; null without a row. */
  readonly expiresAt: Date | null;
  /** Slots taken: `limit - available` when both are known (ready and running jobs hold slots). */
  readonly inUse: number | null;
  /**
   * Running (claimed) jobs with this key, each holding a slot. Ready jobs hold slots too; they
   * are counted in `inUse` but not listed, since finding them would mean reading every ready job.
   */
  readonly running: readonly JobSummary[];
  /** How many jobs wait for a slot. */
  readonly blockedCount: number;
  /** The first waiting jobs, in the order they will be let through (priority, then id). */
  readonly blocked: readonly JobSummary[];
}

/** Settings of {@link listSemaphoreUsage}. */
export interface SemaphoreUsageOptions {
  /** Waiting jobs listed per key. */
  readonly blockedPerKey: number;
  /** Running jobs read in all (a key's are at most its limit, so this bounds a runaway case only). */
  readonly runningLimit: number;
  /** A job definition's slots per key, by job name; null when unknown. */
  readonly limitOf: (jobName: string) => number | null;
}

/**
 * Every key with a semaphore row or blocked jobs, by key. Reads: the semaphores, blocked counts
 * grouped by key, the claimed jobs (few: at most the workers' capacity) and the first blocked
 * jobs of each key on the `(concurrency_key, priority, job_id)` index.
 */
export async function listSemaphoreUsage(db: Db, options: SemaphoreUsageOptions): Promise<SemaphoreUsage[]> {
  const [semaphores, blockedCounts] = await Promise.all([
    db.selectFrom("firm_queue_semaphores").select(["key", "value", "expires_at"]).execute(),
    db.selectFrom("firm_queue_blocked_executions").select(["concurrency_key", sql<number>`COUNT(*)`.as("count")]).groupBy("concurrency_key").execute(),
  ]);
  const keys = [...new Set([...semaphores.map((row) => row.key), ...blockedCounts.map((row) => row.concurrency_key)])].sort();
  if (keys.length === 0) return [];
  const [running, blocked] = await Promise.all([runningWithKeys(db, keys, options.runningLimit), Promise.all(keys.map((key) => firstBlocked(db, key, options.blockedPerKey)))]);
  return keys.map((key, index) => {
    const semaphore = semaphores.find((row) => row.key === key);
    const keyRunning = running.filter((job) => job.concurrencyKey === key);
    const waiting = blocked[index]!;
    const names = [...keyRunning, ...waiting].map((job) => job.name);
    const limit = names.map(options.limitOf).find((value) => value !== null) ?? null;
    const available = semaphore ? Number(semaphore.value) : null;
    return {
      key,
      limit,
      available,
      inUse: limit === null ? null : Math.max(0, limit - (available ?? limit)),
      expiresAt: semaphore ? toDate(semaphore.expires_at) : null,
      running: keyRunning,
      blockedCount: Number(blockedCounts.find((row) => row.concurrency_key === key)?.count ?? 0),
      blocked: waiting,
    };
  });
}

/** Claimed jobs with one of `keys`: the claimed ids first (a small table), then their job rows by id. */
async function runningWithKeys(db: Db, keys: readonly string[], limit: number): Promise<JobSummary[]> {
  const claims = await db.selectFrom("firm_queue_claimed_executions").select(["job_id", "process_id", "created_at"]).orderBy("job_id").limit(limit).execute();
  if (claims.length === 0) return [];
  const jobs = await db
    .selectFrom("firm_queue_jobs as j")
    .selectAll("j")
    .where("j.id", "in", claims.map((claim) => Number(claim.job_id)))
    .where("j.concurrency_key", "in", keys)
    .execute();
  const byId = new Map(claims.map((claim) => [Number(claim.job_id), claim]));
  return jobs
    .map((job) => {
      const claim = byId.get(Number(job.id))!;
      return toSummary({ ...job, since: claim.created_at, failure: null, process_id: claim.process_id } as ListedRow, "claimed");
    })
    .sort((a, b) => a.id - b.id);
}

async function firstBlocked(db: Db, key: string, limit: number): Promise<JobSummary[]> {
  const rows = await db
    .selectFrom("firm_queue_blocked_executions as e")
    .innerJoin("firm_queue_jobs as j", "j.id", "e.job_id")
    .selectAll("j")
    .select([sql<Date | string>`e.created_at`.as("since"), sql<string | null>`NULL`.as("failure"), sql<number | null>`NULL`.as("process_id")])
    .where("e.concurrency_key", "=", key)
    .orderBy("e.priority")
    .orderBy("e.job_id")
    .limit(limit)
    .execute();
  return (rows as ListedRow[]).map((row) => toSummary(row, "blocked"));
}
