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
    db
      .selectFrom("firm_queue_blocked_executions")
      .select(["concurrency_key", sql<number>`COUNT(*)`.as("count")])
      .groupBy("concurrency_key")
      .execute(),
  ]);
  const keys = [
    ...new Set([...semaphores.map((row) => row.key), ...blockedCounts.map((row) => row.concurrency_key)]),
  ].sort();
  if (keys.length === 0) return [];
  const [running, firstBlocked] = await Promise.all([
    runningWithKeys(db, keys, options.runningLimit),
    firstBlockedPerKey(db, options.blockedPerKey),
  ]);
  const blocked = keys.map((key) => firstBlocked.filter((job) => job.concurrencyKey === key));
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
  const claims = await db
    .selectFrom("firm_queue_claimed_executions")
    .select(["job_id", "process_id", "created_at"])
    .orderBy("job_id")
    .limit(limit)
    .execute();
  if (claims.length === 0) return [];
  const jobs = await db
    .selectFrom("firm_queue_jobs as j")
    .selectAll("j")
    .where(
      "j.id",
      "in",
      claims.map((claim) => Number(claim.job_id)),
    )
    .where("j.concurrency_key", "in", keys)
    .execute();
  const byId = new Map(claims.map((claim) => [Number(claim.job_id), claim]));
  return jobs
    .map((job) => {
      const claim = byId.get(Number(job.id))!;
      return toSummary(
        { ...job, since: claim.created_at, failure: null, process_id: claim.process_id } as ListedRow,
        "claimed",
      );
    })
    .sort((a, b) => a.id - b.id);
}

/**
 * The first `limit` blocked jobs of every key, in release order (priority, then id): one window
 * query over the blocked rows (no job rows), then the chosen jobs by id.
 */
async function firstBlockedPerKey(db: Db, limit: number): Promise<JobSummary[]> {
  const ranked = db
    .selectFrom("firm_queue_blocked_executions")
    .select([
      "job_id",
      "created_at",
      "priority",
      sql<number>`ROW_NUMBER() OVER (PARTITION BY concurrency_key ORDER BY priority, job_id)`.as("position"),
    ]);
  const chosen = await db.selectFrom(ranked.as("b")).selectAll("b").where("b.position", "<=", limit).execute();
  if (chosen.length === 0) return [];
  const jobs = new Map<number, Awaited<ReturnType<typeof jobsById>>[number]>();
  for (let start = 0; start < chosen.length; start += 500) {
    for (const job of await jobsById(
      db,
      chosen.slice(start, start + 500).map((row) => Number(row.job_id)),
    ))
      jobs.set(Number(job.id), job);
  }
  return chosen
    .sort((a, b) => a.priority - b.priority || Number(a.job_id) - Number(b.job_id))
    .flatMap((row) => {
      const job = jobs.get(Number(row.job_id));
      return job
        ? [toSummary({ ...job, since: row.created_at, failure: null, process_id: null } as ListedRow, "blocked")]
        : [];
    });
}

function jobsById(db: Db, ids: readonly number[]) {
  return db.selectFrom("firm_queue_jobs").selectAll().where("id", "in", ids).execute();
}
