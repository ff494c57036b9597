import type { Db } from "../database/dialect.js";
import { toProcessRow, type ProcessRow } from "./process.js";

/** A registered process and how long ago it last proved it was alive. */
export interface ProcessHeartbeat extends ProcessRow {
  /** Milliseconds since its last heartbeat, by the database's clock (0 when it is in the future). */
  readonly heartbeatAgeMs: number;
  /** True when that is more than the alive threshold: the process is probably dead. */
  readonly stale: boolean;
}

/**
 * Every row of `firm_queue_processes` (or only `supervisorId` and the processes it supervises),
 * by id, without their jobs: the processes table holds a row per running process, so this read
 * stays small whatever the size of the jobs table.
 */
export async function listProcessHeartbeats(
  db: Db,
  now: Date,
  aliveThresholdMs: number,
  supervisorId?: number,
): Promise<ProcessHeartbeat[]> {
  let query = db.selectFrom("firm_queue_processes").selectAll();
  if (supervisorId !== undefined)
    query = query.where((eb) => eb.or([eb("id", "=", supervisorId), eb("supervisor_id", "=", supervisorId)]));
  const rows = await query.orderBy("id").execute();
  return rows.map((row) => {
    const process = toProcessRow(row);
    const heartbeatAgeMs = Math.max(0, now.getTime() - process.lastHeartbeatAt.getTime());
    return { ...process, heartbeatAgeMs, stale: heartbeatAgeMs > aliveThresholdMs };
  });
}
