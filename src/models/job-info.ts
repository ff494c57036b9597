import type { Db } from "../database/dialect.js";
import { toDate } from "../database/schema.js";
import { readableArguments } from "../serialization.js";
import { parseStoredError, type StoredError } from "./failed-execution.js";
import type { JobRow } from "./job.js";

/** Where a job is in its life. */
export type JobState =
  | "pending"
  | "ready"
  | "scheduled"
  | "blocked"
  | "throttled"
  | "claimed"
  | "failed"
  | "finished"
  | "cancelled";

/** The rate-limit budget a waiting job needs room in (see docs/rate-limits.md). */
export interface JobBudgetWait {
  /** The budget's key: `job:<group>`, `job:<group>/<key>` or `queue:<name>`. */
  readonly budget: string;
  /** The earliest time the job may start as far as the budget knows (its window full or closed until then); null: as soon as a worker claims it. */
  readonly mayStartAt: Date | null;
}

/** What every view of a job shows: `getJob`, failed-job and inspection listings build on it. */
export interface JobBasics {
  readonly id: number;
  readonly name: string;
  readonly queue: string;
  readonly priority: number;
  /** The decoded arguments; the raw stored text if it cannot be decoded. */
  readonly arguments: unknown;
  /** Attempts that have ended (finished, failed or lost with their process). */
  readonly attempts: number;
  readonly createdAt: Date;
}

/** The {@link JobBasics} of a jobs row. */
export function jobBasics(
  row: Pick<JobRow, "id" | "class_name" | "queue_name" | "priority" | "arguments" | "attempts" | "created_at">,
): JobBasics {
  return {
    id: Number(row.id),
    name: row.class_name,
    queue: row.queue_name,
    priority: row.priority,
    arguments: readableArguments(row.arguments),
    attempts: row.attempts,
    createdAt: toDate(row.created_at),
  };
}

/** What `firm.getJob()` shows of a job in any state; {@link JobInfo} adds what each state has. */
export interface JobInfoCommon extends JobBasics {
  readonly state: JobState;
  readonly scheduledAt: Date | null;
  readonly finishedAt: Date | null;
  readonly concurrencyKey: string | null;
  /** The unique key the job was enqueued with (see docs/jobs.md), or null. */
  readonly key: string | null;
  /** While the job still runs (state `claimed`), when its cancel was requested; null otherwise (see state `cancelled`). */
  readonly cancelledAt: Date | null;
  /** The latest value the handler reported with `context.progress()`; absent when none. */
  readonly progress?: unknown;
  /**
   * The error of the job's most recent failed attempt, whatever its state now: a job waiting for
   * a retry, a job that succeeded after failing, a discarded job. Absent when no attempt failed.
   */
  readonly lastError?: StoredError;
}

/**
 * The fields of other states, absent in this one: declared as never set, so `info.error` reads
 * as `undefined` before `state` is checked, and as the failed job's error after.
 */
export type OtherStatesFields<Keys extends "result" | "error" | "rateLimit"> = { readonly [Key in Keys]?: undefined };

/** A job waiting for the jobs it depends on (`dependsOn`, or its children in a flow). */
export interface PendingJobInfo extends JobInfoCommon, OtherStatesFields<"result" | "error" | "rateLimit"> {
  readonly state: "pending";
  readonly finishedAt: null;
}

/** A job waiting for a worker. */
export interface ReadyJobInfo extends JobInfoCommon, OtherStatesFields<"result" | "error"> {
  readonly state: "ready";
  /** The queue's rate-limit budget, when the queue has a rate limit; absent otherwise. */
  readonly rateLimit?: JobBudgetWait;
}

/** A job waiting for room in its own rate limit's budget. */
export interface ThrottledJobInfo extends JobInfoCommon, OtherStatesFields<"result" | "error"> {
  readonly state: "throttled";
  /** The budget it waits for. */
  readonly rateLimit: JobBudgetWait;
}

/** A job due later: at its `wait` or `at`, its retry, or its recurring task's time. */
export interface ScheduledJobInfo extends JobInfoCommon, OtherStatesFields<"result" | "error" | "rateLimit"> {
  readonly state: "scheduled";
}

/** A job waiting for a slot of its concurrency limit. */
export interface BlockedJobInfo extends JobInfoCommon, OtherStatesFields<"result" | "error" | "rateLimit"> {
  readonly state: "blocked";
}

/** A job a worker has claimed and runs. */
export interface ClaimedJobInfo extends JobInfoCommon, OtherStatesFields<"result" | "error" | "rateLimit"> {
  readonly state: "claimed";
}

/** A job that ran out of attempts and waits in failed jobs to be retried or discarded. */
export interface FailedStateJobInfo extends JobInfoCommon, OtherStatesFields<"result" | "rateLimit"> {
  readonly state: "failed";
  /** The error that put the job in failed executions. */
  readonly error?: StoredError;
}

/**
 * A job that ended: its handler succeeded (`finished`, or one whose retry policy discarded it
 * after a failed attempt), or it was cancelled. `Result`: the handler's return type.
 */
export interface FinishedJobInfo<Result = unknown> extends JobInfoCommon, OtherStatesFields<"error" | "rateLimit"> {
  readonly state: "finished";
  /** What the handler returned, decoded; absent when it returned nothing (undefined or null). */
  readonly result?: Result;
}

/** A cancelled job: cancelled while it waited, or while it ran (the attempt ended as the worker heard of it). */
export interface CancelledJobInfo<Result = unknown> extends JobInfoCommon, OtherStatesFields<"error" | "rateLimit"> {
  readonly state: "cancelled";
  /** When it was cancelled (or its cancel requested, for a job that was running). */
  readonly cancelledAt: Date;
  readonly finishedAt: Date;
  /**
   * What the handler returned when the job finished its attempt after its cancel was requested;
   * absent otherwise.
   */
  readonly result?: Result;
}

/**
 * A job as `firm.getJob()` shows it: a union on `state`. Each state's own fields (`error`,
 * `result`, `rateLimit`) have their type once `state` is checked (`if (info.state === "failed")
 * info.error`); before, or in another state, they read as `undefined`.
 * `Result` is the handler's return type: `unknown` from `firm.getJob`, the handler's (awaited)
 * return type from `job.get`.
 */
export type JobInfo<Result = unknown> =
  | PendingJobInfo
  | ReadyJobInfo
  | ThrottledJobInfo
  | ScheduledJobInfo
  | BlockedJobInfo
  | ClaimedJobInfo
  | FailedStateJobInfo
  | FinishedJobInfo<Result>
  | CancelledJobInfo<Result>;

/** The {@link JobInfo} of one state: `JobInfoOf<"failed">`. */
export type JobInfoOf<State extends JobState, Result = unknown> = Extract<JobInfo<Result>, { readonly state: State }>;

/**
 * Read one job and its state in a single query: the job row joined with each execution table
 * (a job has at most one execution row at a time).
 */
export async function findJobInfo(db: Db, jobId: number): Promise<JobInfo | null> {
  const row = await db
    .selectFrom("firm_queue_jobs as j")
    .leftJoin("firm_queue_ready_executions as r", "r.job_id", "j.id")
    .leftJoin("firm_queue_claimed_executions as c", "c.job_id", "j.id")
    .leftJoin("firm_queue_scheduled_executions as s", "s.job_id", "j.id")
    .leftJoin("firm_queue_blocked_executions as b", "b.job_id", "j.id")
    .leftJoin("firm_queue_failed_executions as f", "f.job_id", "j.id")
    .leftJoin("firm_queue_throttled_executions as t", "t.job_id", "j.id")
    .leftJoin("firm_queue_rate_budgets as tb", "tb.key", "t.budget_key")
    .leftJoin("firm_queue_rate_budgets as qb", (join) =>
      join.onRef("qb.queue_name", "=", "r.queue_name").on("r.id", "is not", null),
    )
    .selectAll("j")
    .select([
      "r.id as ready_id",
      "c.id as claimed_id",
      "s.id as scheduled_id",
      "b.id as blocked_id",
      "f.id as failed_id",
      "f.error as failure",
      "t.id as throttled_id",
      "t.budget_key as throttled_budget",
      "tb.available_at as throttled_at",
      "qb.key as queue_budget",
      "qb.available_at as queue_budget_at",
    ])
    .where("j.id", "=", jobId)
    .executeTakeFirst();
  if (!row) return null;
  const state: JobState =
    row.failed_id !== null
      ? "failed"
      : row.claimed_id !== null
        ? "claimed"
        : row.ready_id !== null
          ? "ready"
          : row.blocked_id !== null
            ? "blocked"
            : row.throttled_id !== null
              ? "throttled"
              : row.scheduled_id !== null
                ? "scheduled"
                : row.cancelled_at !== null && row.finished_at !== null
                  ? "cancelled"
                  : row.finished_at === null && row.unmet_dependencies > 0
                    ? "pending"
                    : "finished";
  const rateLimit =
    row.throttled_budget !== null
      ? { budget: row.throttled_budget, mayStartAt: futureOrNull(row.throttled_at) }
      : row.queue_budget !== null
        ? { budget: row.queue_budget, mayStartAt: futureOrNull(row.queue_budget_at) }
        : undefined;
  const error = parseStoredError(row.failure);
  const lastError = parseStoredError(row.last_error);
  // Each state's own fields come from its execution row (a job has at most one): `error` from a
  // failed row, `rateLimit` from a throttled row or a ready row's queue budget; `result` is
  // written only when an attempt succeeds, which ends the job (finished, or cancelled when its
  // cancel was requested while it ran). So the flat object is the state's member of JobInfo.
  return {
    ...jobBasics(row),
    state,
    scheduledAt: toDate(row.scheduled_at),
    finishedAt: toDate(row.finished_at),
    concurrencyKey: row.concurrency_key,
    key: row.job_key ?? null,
    cancelledAt: toDate(row.cancelled_at ?? null),
    ...(row.result == null ? {} : { result: readableArguments(row.result) }),
    ...(row.progress == null ? {} : { progress: readableArguments(row.progress) }),
    ...(rateLimit ? { rateLimit } : {}),
    ...(error ? { error } : {}),
    ...(lastError ? { lastError } : {}),
  } as JobInfo;
}

/** A budget time that says when a job may start: kept when it is later than now. */
function futureOrNull(value: Date | string | null): Date | null {
  const at = toDate(value);
  return at !== null && at.getTime() > Date.now() ? at : null;
}
