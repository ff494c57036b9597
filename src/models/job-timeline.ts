import type { Db } from "../database/dialect.js";
import { toDate } from "../database/schema.js";
import { findJobInfo, type JobInfo } from "./job-info.js";
import { findJobBatch, findJobRelations, type JobBatchLink, type JobRelations } from "./job-relations.js";
import { toProcessRow, type ProcessRow } from "./process.js";

/** One moment of a job's life that its rows still record. */
export interface TimelineEvent {
  readonly kind:
    | "enqueued"
    | "recurring"
    | "scheduled"
    | "blocked"
    | "ready"
    | "claimed"
    | "failed"
    | "finished"
    | "cancelled";
  readonly at: Date;
  /** Words for the moment: which process claimed it, which key blocks it, which task enqueued it. */
  readonly detail?: string;
}

/**
 * A job with everything its rows say: `getJob()`'s view plus the timeline, who runs it, the jobs
 * it waits for and that wait for it (the first of each, with their counts), and its batch.
 */
export type JobDetail = JobInfo &
  JobRelations & {
    /** Oldest first. Only the current state's moment is known for states the job has left. */
    readonly timeline: readonly TimelineEvent[];
    /** State `claimed`: the process running it; null when that process's row is gone. */
    readonly claimedBy?: ProcessRow | null;
    /** State `blocked`: when its wait for a slot expires and maintenance looks at it again. */
    readonly blockedUntil?: Date;
    /** Set when a recurring task's tick enqueued the job. */
    readonly recurring?: { readonly taskKey: string; readonly runAt: Date };
    /** The batch the job belongs to, or whose callback it is; absent for a job in no batch. */
    readonly batch?: JobBatchLink;
  };

/**
 * A job and its timeline: the job row (through {@link findJobInfo}), then its execution row's
 * times and, for a claimed job, the claiming process; each a lookup by unique key. Its dependencies
 * and dependents are listed up to `relatedLimit` each (see {@link findJobRelations}).
 */
export async function findJobDetail(db: Db, jobId: number, relatedLimit: number): Promise<JobDetail | null> {
  const info = await findJobInfo(db, jobId);
  if (!info) return null;
  const [state, recurring, relations, batch] = await Promise.all([
    stateRow(db, info),
    db
      .selectFrom("firm_queue_recurring_executions")
      .select(["task_key", "run_at"])
      .where("job_id", "=", jobId)
      .executeTakeFirst(),
    findJobRelations(db, jobId, relatedLimit),
    findJobBatch(db, jobId),
  ]);
  const timeline: TimelineEvent[] = [
    { kind: "enqueued", at: info.createdAt, detail: `queue ${info.queue}, priority ${info.priority}` },
  ];
  if (recurring)
    timeline.push({
      kind: "recurring",
      at: toDate(recurring.run_at),
      detail: `tick of recurring task ${recurring.task_key}`,
    });
  if (info.scheduledAt && info.scheduledAt.getTime() - info.createdAt.getTime() > 1000)
    timeline.push({ kind: "scheduled", at: info.scheduledAt, detail: "due" });
  if (state.event) timeline.push(state.event);
  if (info.finishedAt)
    timeline.push({ kind: info.state === "cancelled" ? "cancelled" : "finished", at: info.finishedAt });
  timeline.sort((a, b) => a.at.getTime() - b.at.getTime());
  return {
    ...info,
    timeline,
    ...(info.state === "claimed" ? { claimedBy: state.process ?? null } : {}),
    ...(state.blockedUntil ? { blockedUntil: state.blockedUntil } : {}),
    ...(recurring ? { recurring: { taskKey: recurring.task_key, runAt: toDate(recurring.run_at) } } : {}),
    ...relations,
    ...(batch ? { batch } : {}),
  };
}

async function stateRow(
  db: Db,
  info: JobInfo,
): Promise<{ event?: TimelineEvent; process?: ProcessRow; blockedUntil?: Date }> {
  switch (info.state) {
    case "ready": {
      const row = await db
        .selectFrom("firm_queue_ready_executions")
        .select("created_at")
        .where("job_id", "=", info.id)
        .executeTakeFirst();
      return row ? { event: { kind: "ready", at: toDate(row.created_at), detail: "waiting for a worker" } } : {};
    }
    case "blocked": {
      const row = await db
        .selectFrom("firm_queue_blocked_executions")
        .select(["created_at", "expires_at", "concurrency_key"])
        .where("job_id", "=", info.id)
        .executeTakeFirst();
      if (!row) return {};
      return {
        event: { kind: "blocked", at: toDate(row.created_at), detail: `waiting for a slot of ${row.concurrency_key}` },
        blockedUntil: toDate(row.expires_at),
      };
    }
    case "claimed": {
      const row = await db
        .selectFrom("firm_queue_claimed_executions as c")
        .leftJoin("firm_queue_processes as p", "p.id", "c.process_id")
        .selectAll("p")
        .select(["c.created_at as claimed_at", "c.process_id"])
        .where("c.job_id", "=", info.id)
        .executeTakeFirst();
      if (!row) return {};
      const process =
        row.id === null || row.id === undefined ? undefined : toProcessRow(row as Parameters<typeof toProcessRow>[0]);
      const detail = process
        ? `by ${process.kind} ${process.name} (pid ${process.pid} on ${process.hostname})`
        : `by process ${row.process_id ?? "?"} (gone)`;
      return { event: { kind: "claimed", at: toDate(row.claimed_at), detail }, ...(process ? { process } : {}) };
    }
    case "failed": {
      const row = await db
        .selectFrom("firm_queue_failed_executions")
        .select("created_at")
        .where("job_id", "=", info.id)
        .executeTakeFirst();
      return row
        ? {
            event: {
              kind: "failed",
              at: toDate(row.created_at),
              detail: info.error ? `${info.error.name}: ${info.error.message}` : "",
            },
          }
        : {};
    }
    default:
      return {};
  }
}
