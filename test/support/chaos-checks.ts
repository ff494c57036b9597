import type { Db } from "../../src/database/dialect.js";
import { KEY_LIMIT, ON_FINISH_JOB, ON_SUCCESS_JOB } from "../fixtures/chaos-jobs.js";
import { countRows } from "./harness.js";
import { isAlive } from "./supervised.js";

/** Execution tables that must be empty once every job has finished. */
const EXECUTION_TABLES = [
  "firm_queue_ready_executions",
  "firm_queue_claimed_executions",
  "firm_queue_blocked_executions",
  "firm_queue_scheduled_executions",
  "firm_queue_failed_executions",
] as const;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Jobs of the run not finished yet. */
async function unfinished(db: Db): Promise<number> {
  const row = await db
    .selectFrom("firm_queue_jobs")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("finished_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * Wait until every job of the run has finished; otherwise say what is stuck where. The faults have
 * stopped by now, so jobs left unfinished after `timeoutMs`, or with no job finishing for
 * `stallMs` (longer than the alive threshold, after which even a dead process's claims are
 * recovered), are lost or stranded.
 */
export async function waitForAllFinished(
  db: Db,
  total: number,
  timeoutMs: number,
  stallMs: number,
): Promise<string | null> {
  const deadline = Date.now() + timeoutMs;
  let progressAt = Date.now();
  let last = Number.POSITIVE_INFINITY;
  for (;;) {
    const [jobs, left] = await Promise.all([countRows(db, "firm_queue_jobs"), unfinished(db)]);
    // More rows than expected (a callback enqueued twice) will not go away: the end state reports them.
    if (jobs >= total && left === 0) return null;
    if (left < last) [last, progressAt] = [left, Date.now()];
    const now = Date.now();
    if (now > deadline || now - progressAt > stallMs) {
      const why =
        now > deadline ? `${timeoutMs / 1000} s after the faults stopped` : `and none finished for ${stallMs / 1000} s`;
      return `${left} of ${jobs} jobs (${total} enqueued) not finished ${why}: ${await whereStuck(db)}`;
    }
    await sleep(500);
  }
}

/** Counts per execution table, and which processes (alive or not) hold the claims. */
async function whereStuck(db: Db): Promise<string> {
  const counts = await Promise.all(
    EXECUTION_TABLES.map(async (table) => `${table.replace("firm_queue_", "")}=${await countRows(db, table)}`),
  );
  const claims = await db
    .selectFrom("firm_queue_claimed_executions as c")
    .leftJoin("firm_queue_processes as p", "p.id", "c.process_id")
    .select(["c.job_id", "c.process_id", "p.pid", "p.kind"])
    .limit(20)
    .execute();
  const holders = claims.map(
    (claim) =>
      `job ${claim.job_id} by process ${claim.process_id} (${claim.pid === null ? "no row" : `pid ${claim.pid}, ${isAlive(Number(claim.pid)) ? "alive" : "dead"}`})`,
  );
  const failed = await db.selectFrom("firm_queue_failed_executions").select(["job_id", "error"]).limit(5).execute();
  return [
    counts.join(" "),
    ...holders,
    ...failed.map((row) => `failed job ${row.job_id}: ${String(row.error).slice(0, 200)}`),
  ].join("; ");
}

/**
 * Wait until the process table holds only live processes: the rows of killed supervisors and
 * workers must be pruned within the alive threshold (plus slack for a loaded machine).
 */
export async function waitForOnlyLiveProcessRows(db: Db, timeoutMs: number): Promise<string | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await db.selectFrom("firm_queue_processes").select(["id", "kind", "pid"]).execute();
    const dead = rows.filter((row) => !isAlive(Number(row.pid)));
    if (dead.length === 0) return null;
    if (Date.now() > deadline)
      return `rows of dead processes left ${timeoutMs / 1000} s after the faults stopped: ${dead.map((row) => `${row.kind} pid ${row.pid} (id ${row.id})`).join(", ")}`;
    await sleep(500);
  }
}

/** After the final TERM: nothing left anywhere but finished jobs and full semaphores. */
export async function endStateViolations(db: Db, total: number): Promise<string[]> {
  const violations: string[] = [];
  const jobs = await countRows(db, "firm_queue_jobs");
  if (jobs !== total) violations.push(`${jobs} job rows, ${total} enqueued`);
  const left = await unfinished(db);
  if (left > 0) violations.push(`${left} jobs not finished after the final stop`);
  for (const table of [...EXECUTION_TABLES, "firm_queue_processes"] as const) {
    const count = await countRows(db, table);
    if (count > 0) violations.push(`${count} rows left in ${table}`);
  }
  // Every key's slots are back: a semaphore below its limit is a slot held by nobody.
  const semaphores = await db.selectFrom("firm_queue_semaphores").select(["key", "value"]).execute();
  for (const row of semaphores) {
    if (Number(row.value) !== KEY_LIMIT)
      violations.push(`semaphore ${row.key} has ${row.value} free slots of ${KEY_LIMIT}`);
  }
  return violations;
}

/** Lines of the processes' output a user must never see. */
export function outputViolations(output: string): string[] {
  return output
    .split("\n")
    .filter((line) => /database is locked|SQLITE_BUSY/i.test(line))
    .slice(0, 10)
    .map((line) => `printed: ${line.trim().slice(0, 300)}`);
}

/** A batch of the run: its id, how many jobs it was written with, and the callbacks it must enqueue. */
interface WrittenBatch {
  readonly id: number;
  readonly members: readonly number[];
  readonly callbacks: readonly string[];
}

/**
 * The batches in the database once every job has finished: each ended `finished` with none
 * pending (every job of the chaos mix finishes in the end), and each enqueued each of its
 * callbacks as exactly one job, and no other. Returns the violations and the callback jobs' ids.
 */
export async function batchViolations(
  db: Db,
  batches: readonly WrittenBatch[],
): Promise<{ violations: string[]; callbackIds: number[] }> {
  const violations: string[] = [];
  const rows = await db.selectFrom("firm_queue_batches").select(["id", "state", "total", "pending"]).execute();
  const byId = new Map(rows.map((row) => [Number(row.id), row]));
  for (const batch of batches) {
    const row = byId.get(batch.id);
    if (!row) violations.push(`batch ${batch.id} has no row`);
    else if (row.state !== "finished" || Number(row.pending) !== 0 || Number(row.total) !== batch.members.length)
      violations.push(
        `batch ${batch.id} is ${row.state} with ${row.pending} of ${row.total} pending (${batch.members.length} jobs written)`,
      );
  }
  const callbackJobs = await db
    .selectFrom("firm_queue_jobs")
    .select(["id", "batch_id", "class_name"])
    .where("class_name", "in", [ON_FINISH_JOB, ON_SUCCESS_JOB])
    .execute();
  const found = new Map<string, number[]>();
  for (const job of callbackJobs) {
    const slot = `${job.batch_id}:${job.class_name}`;
    found.set(slot, [...(found.get(slot) ?? []), Number(job.id)]);
  }
  const expected = new Set(batches.flatMap((batch) => batch.callbacks.map((name) => `${batch.id}:${name}`)));
  for (const slot of expected) {
    const jobs = found.get(slot) ?? [];
    if (jobs.length !== 1)
      violations.push(`batch callback ${slot} has ${jobs.length} jobs (${jobs.join(", ")}), not one`);
  }
  for (const [slot, jobs] of found)
    if (!expected.has(slot))
      violations.push(`callback jobs ${jobs.join(", ")} (${slot}) belong to no batch's callbacks`);
  return { violations, callbackIds: callbackJobs.map((job) => Number(job.id)) };
}
