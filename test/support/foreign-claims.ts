import type { Db } from "../../src/database/dialect.js";

/**
 * A process row as another (dead or alive) host would have left it: a worker on "other-host",
 * its last heartbeat `heartbeatAgoMs` ago. Returns its id.
 */
export async function insertForeignProcess(db: Db, heartbeatAgoMs: number, kind = "Worker"): Promise<number> {
  const at = new Date(Date.now() - heartbeatAgoMs);
  const row = await db
    .insertInto("firm_queue_processes")
    .values({
      kind,
      name: `elsewhere-${Math.random()}`,
      pid: 999_999,
      hostname: "other-host",
      supervisor_id: null,
      metadata: null,
      last_heartbeat_at: at,
      created_at: at,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/**
 * Move a ready job to claimed by `processId`, as a worker there would have; `started` (the
 * default) as one whose handler then began, so that recovery counts the run as an attempt, or
 * (`started: false`) as a job it only took ahead into its buffer.
 */
export async function claimForProcess(
  db: Db,
  jobId: number,
  processId: number,
  { started = true }: { started?: boolean } = {},
): Promise<void> {
  await db.deleteFrom("firm_queue_ready_executions").where("job_id", "=", jobId).execute();
  const now = new Date();
  await db
    .insertInto("firm_queue_claimed_executions")
    .values({ job_id: jobId, process_id: processId, created_at: now, started_at: started ? now : null })
    .execute();
}
