import type { Db } from "../database/dialect.js";
import { toDate } from "../database/schema.js";
import { toProcessRow, type ProcessRow } from "./process.js";
import { toSummary, type JobSummary, type ListedRow } from "./job-listing.js";
import { sql } from "kysely";

/** A registered process, whether its heartbeat is overdue, and the jobs it runs right now. */
export interface ProcessDetail extends ProcessRow {
  /** True when its last heartbeat is older than the alive threshold: it is probably dead. */
  readonly stale: boolean;
  readonly createdAt: Date;
  /** Jobs claimed by this process (workers only), oldest claim first. */
  readonly runningJobs: readonly JobSummary[];
}

/**
 * Every row of `firm_queue_processes` (supervisors first, then by id) with its claimed jobs:
 * one read of the processes, one of the claimed executions joined with their jobs.
 */
export async function listProcessDetails(db: Db, now: Date, aliveThresholdMs: number): Promise<ProcessDetail[]> {
  const [rows, claimed] = await Promise.all([
    db.selectFrom("firm_queue_processes").selectAll().orderBy("id").execute(),
    db
      .selectFrom("firm_queue_claimed_executions as e")
      .innerJoin("firm_queue_jobs as j", "j.id", "e.job_id")
      .selectAll("j")
      .select([sql<Date | string>`e.created_at`.as("since"), sql<string | null>`NULL`.as("failure"), "e.process_id"])
      .orderBy("e.job_id")
      .execute(),
  ]);
  const running = new Map<number, JobSummary[]>();
  for (const row of claimed as ListedRow[]) {
    if (row.process_id === null) continue;
    const list = running.get(Number(row.process_id)) ?? [];
    list.push(toSummary(row, "claimed"));
    running.set(Number(row.process_id), list);
  }
  const details = rows.map((row) => {
    const process = toProcessRow(row);
    return {
      ...process,
      stale: now.getTime() - process.lastHeartbeatAt.getTime() > aliveThresholdMs,
      createdAt: toDate(row.created_at),
      runningJobs: running.get(process.id) ?? [],
    };
  });
  return details.sort((a, b) => Number(a.kind !== "Supervisor") - Number(b.kind !== "Supervisor") || a.id - b.id);
}
