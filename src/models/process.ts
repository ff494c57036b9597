import { hostname } from "node:os";
import type { Selectable } from "kysely";
import type { Db } from "../database/dialect.js";
import { toDate, type ProcessesTable } from "../database/schema.js";

/** The roles that register in `firm_queue_processes`. */
export type ProcessKind = "Supervisor" | "Worker" | "Dispatcher" | "Scheduler";

/** What a process writes about itself when it registers. */
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

/**
 * Delete the row a registration of `name` may have left although its caller saw it fail (the
 * COMMIT landed, its answer was lost), so that registering the same name again does not collide
 * with it. Such a row holds nothing yet: no claim, no child.
 */
export async function deleteUnconfirmedRegistration(db: Db, name: string, supervisorId: number | null): Promise<void> {
  await db
    .deleteFrom("firm_queue_processes")
    .where("name", "=", name)
    .where("supervisor_id", supervisorId === null ? "is" : "=", supervisorId)
    .execute();
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

/**
 * Refresh the heartbeat of `processId` and, with `andSupervised`, of every process it
 * supervises: they live on this event loop, so if this one is beating they are alive too.
 */
export async function heartbeatOwnProcesses(
  db: Db,
  processId: number,
  andSupervised: boolean,
  now: Date,
): Promise<void> {
  await db
    .updateTable("firm_queue_processes")
    .set({ last_heartbeat_at: now })
    .where((eb) =>
      andSupervised ? eb.or([eb("id", "=", processId), eb("supervisor_id", "=", processId)]) : eb("id", "=", processId),
    )
    .execute();
}

/** Remove a process row (deregistration, or a dead process whose claims were recovered). */
export async function deleteProcess(db: Db, processId: number): Promise<void> {
  await db.deleteFrom("firm_queue_processes").where("id", "=", processId).execute();
}

/** A process row as read back. */
export interface ProcessRow {
  /** Its row id in `firm_queue_processes`. */
  readonly id: number;
  readonly kind: ProcessKind;
  readonly name: string;
  readonly pid: number;
  readonly hostname: string;
  /** The supervisor it belongs to; null for a supervisor. */
  readonly supervisorId: number | null;
  /** Queues, concurrency, mode… as stored in the row. */
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly lastHeartbeatAt: Date;
}

/** The process a supervisor registered under `name`, or null. */
export async function findSupervisedProcess(db: Db, supervisorId: number, name: string): Promise<ProcessRow | null> {
  const row = await db
    .selectFrom("firm_queue_processes")
    .selectAll()
    .where("supervisor_id", "=", supervisorId)
    .where("name", "=", name)
    .executeTakeFirst();
  return row ? toProcessRow(row) : null;
}

/** A raw process row as the rest of the code wants it: numbers, a Date, parsed metadata. */
export function toProcessRow(row: Selectable<ProcessesTable>): ProcessRow {
  return {
    id: Number(row.id),
    kind: row.kind as ProcessKind,
    name: row.name,
    pid: Number(row.pid),
    hostname: row.hostname ?? "",
    supervisorId: row.supervisor_id === null ? null : Number(row.supervisor_id),
    metadata: parseMetadata(row.metadata),
    lastHeartbeatAt: toDate(row.last_heartbeat_at),
  };
}

/**
 * A process row's metadata: the object its role registered, or, when the stored text is not a
 * JSON object (altered by hand), that text under `unreadableMetadata`. Every reader of process
 * rows (crash recovery among them) goes through here, and a damaged row must not stop them.
 */
function parseMetadata(text: string | null): Record<string, unknown> {
  if (!text) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // Shown below as it is.
  }
  return { unreadableMetadata: text };
}
