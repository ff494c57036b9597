import { hostname } from "node:os";
import type { Db } from "../database/dialect.js";

/** The roles that register in `firm_queue_processes`. */
export type ProcessKind = "Supervisor" | "Worker" | "Dispatcher" | "Scheduler";

export interface ProcessRegistration {
  readonly kind: ProcessKind;
  readonly name: string;
  readonly supervisorId?: number | null;
  readonly metadata?: Record<string, unknown>;
}

/** Record a running process and return its id. */
export async function registerProcess(db: Db, registration: ProcessRegistration, now: Date): Promise<number> {
  const row = await db
    .insertInto("firm_queue_processes")
    .values({
      kind: registration.kind,
      name: registration.name,
      pid: process.pid,
      hostname: hostname(),
      supervisor_id: registration.supervisorId ?? null,
      metadata: registration.metadata ? JSON.stringify(registration.metadata) : null,
      last_heartbeat_at: now,
      created_at: now,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** Refresh a process's heartbeat. Returns false when its row is gone: the process should stop. */
export async function heartbeatProcess(db: Db, processId: number, now: Date): Promise<boolean> {
  const result = await db
    .updateTable("firm_queue_processes")
    .set({ last_heartbeat_at: now })
    .where("id", "=", processId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteProcess(db: Db, processId: number): Promise<void> {
  await db.deleteFrom("firm_queue_processes").where("id", "=", processId).execute();
}
